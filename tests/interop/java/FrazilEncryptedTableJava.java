// Java 1.10.2's own table-file readers and writers over an encrypted frazil table, and the
// reverse, with a KeyManagementClient over the same master key (master.key).
//
// read <dir>: the manifest list named in list.path, its key metadata in list.km (Java 1.10.2
// has no manifest-list encryption: the key comes from frazil's snapshot key, unwrapped by the
// test), opened with EncryptingFileIO.newDecryptingInputFile and read by ManifestLists; every
// manifest read by ManifestFiles.read through EncryptingFileIO (its key metadata from the list
// entry); every data file opened with EncryptingFileIO.newInputFile(DataFile) (Parquet modular
// encryption keyed by the file's key metadata) and read by Iceberg's Parquet + generic readers.
// Prints "row <id> <v>" per live row, then "done".
//
// write <dir>: writes rows 100..102 as one encrypted Parquet data file with Parquet.writeData
// over StandardEncryptionManager.encrypt, and a v2 manifest of it with ManifestFiles.write over
// an encrypted output; prints "manifest <path> <length> <key metadata hex>", then "done".
package org.apache.iceberg;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.encryption.EncryptingFileIO;
import org.apache.iceberg.encryption.KeyManagementClient;
import org.apache.iceberg.encryption.StandardEncryptionManager;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;

public class FrazilEncryptedTableJava {
  static final Schema SCHEMA =
      new Schema(
          Types.NestedField.optional(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "v", Types.StringType.get()));

  /** A test KMS (Java's UnitestKMS is not in the runtime jar): AES-GCM under a master key. */
  static class FileKms implements KeyManagementClient {
    private byte[] master;

    @Override
    public void initialize(Map<String, String> properties) {
      try {
        master = java.nio.file.Files.readAllBytes(Path.of(properties.get("master-key-file")));
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    }

    private byte[] gcm(int mode, byte[] nonce, byte[] data) throws Exception {
      Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
      c.init(mode, new SecretKeySpec(master, "AES"), new GCMParameterSpec(128, nonce));
      return c.doFinal(data);
    }

    @Override
    public ByteBuffer wrapKey(ByteBuffer key, String keyId) {
      try {
        byte[] nonce = new byte[12];
        new SecureRandom().nextBytes(nonce);
        byte[] sealed = gcm(Cipher.ENCRYPT_MODE, nonce, bytesOf(key));
        return ByteBuffer.allocate(12 + sealed.length).put(nonce).put(sealed).flip();
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    }

    @Override
    public ByteBuffer unwrapKey(ByteBuffer wrapped, String keyId) {
      try {
        byte[] w = bytesOf(wrapped);
        byte[] nonce = java.util.Arrays.copyOfRange(w, 0, 12);
        byte[] rest = java.util.Arrays.copyOfRange(w, 12, w.length);
        return ByteBuffer.wrap(gcm(Cipher.DECRYPT_MODE, nonce, rest));
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    }
  }

  /** Local files, as Java's tests use them. */
  static class LocalIO implements FileIO {
    @Override
    public InputFile newInputFile(String path) {
      return Files.localInput(path);
    }

    @Override
    public OutputFile newOutputFile(String path) {
      return Files.localOutput(new File(path));
    }

    @Override
    public void deleteFile(String path) {
      new File(path).delete();
    }
  }

  static byte[] bytesOf(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[1]);
    FileKms kms = new FileKms();
    kms.initialize(Map.of("master-key-file", dir.resolve("master.key").toString()));
    StandardEncryptionManager em = new StandardEncryptionManager("master-1", 16, kms);
    EncryptingFileIO io = EncryptingFileIO.combine(new LocalIO(), em);
    if (args[0].equals("read")) {
      String listPath = java.nio.file.Files.readString(dir.resolve("list.path")).trim();
      byte[] listKm = java.nio.file.Files.readAllBytes(dir.resolve("list.km"));
      InputFile list =
          io.newDecryptingInputFile(listPath, new File(listPath).length(), ByteBuffer.wrap(listKm));
      Map<Integer, PartitionSpec> specs = Map.of(0, PartitionSpec.unpartitioned());
      for (ManifestFile manifest : ManifestLists.read(list)) {
        try (ManifestReader<DataFile> reader = ManifestFiles.read(manifest, io, specs)) {
          for (DataFile file : reader) {
            InputFile data = io.newInputFile(file);
            try (CloseableIterable<Record> rows =
                Parquet.read(data)
                    .project(SCHEMA)
                    .createReaderFunc(s -> GenericParquetReaders.buildReader(SCHEMA, s))
                    .build()) {
              for (Record r : rows) {
                System.out.println("row " + r.getField("id") + " " + r.getField("v"));
              }
            }
          }
        }
      }
    } else {
      EncryptedOutputFile dataOut = em.encrypt(Files.localOutput(dir.resolve("java-data.parquet").toFile()));
      DataWriter<Record> writer =
          Parquet.writeData(dataOut)
              .schema(SCHEMA)
              .createWriterFunc(s -> GenericParquetWriter.create(SCHEMA, s))
              .withSpec(PartitionSpec.unpartitioned())
              .withKeyMetadata(dataOut.keyMetadata()) // as Java's file writer factories do
              .overwrite()
              .build();
      for (long id = 100; id < 103; id++) {
        GenericRecord r = GenericRecord.create(SCHEMA);
        r.setField("id", id);
        r.setField("v", "java-" + id);
        writer.write(r);
      }
      writer.close();
      DataFile dataFile = writer.toDataFile();
      EncryptedOutputFile manifestOut =
          em.encrypt(Files.localOutput(dir.resolve("java-m0.avro").toFile()));
      ManifestWriter<DataFile> mw =
          ManifestFiles.write(2, PartitionSpec.unpartitioned(), manifestOut, 7L);
      mw.add(dataFile);
      mw.close();
      ManifestFile m = mw.toManifestFile();
      System.out.println(
          "manifest "
              + m.path()
              + " "
              + m.length()
              + " "
              + HexFormat.of().formatHex(bytesOf(m.keyMetadata())));
    }
    System.out.println("done");
  }
}
