// Java 1.10.2's own encryption classes over files frazil wrote, and the reverse: decrypts every
// f_<name>.bin AES-GCM stream with AesGcmInputFile under the key and AAD prefix that
// StandardKeyMetadata.parse reads from f_<name>.km (printing "ok <name>" when the plaintext
// equals f_<name>.plain), unwraps f_wrapped.bin with a KeyManagementClient over master.key,
// then writes j_<size>.bin/.km/.plain with AesGcmOutputFile and StandardKeyMetadata, and
// j_wrapped.bin/.plain with the same KMS. In Java's package: StandardKeyMetadata is
// package-private there.
package org.apache.iceberg.encryption;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Map;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;

public class FrazilEncryptionJava {
  /** A test KMS (Java's UnitestKMS is not in the runtime jar): AES-GCM under a master key. */
  static class FileKms implements KeyManagementClient {
    private byte[] master;

    @Override
    public void initialize(Map<String, String> properties) {
      try {
        master = Files.readAllBytes(Path.of(properties.get("master-key-file")));
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    }

    @Override
    public ByteBuffer wrapKey(ByteBuffer key, String keyId) {
      byte[] k = new byte[key.remaining()];
      key.duplicate().get(k);
      return ByteBuffer.wrap(new Ciphers.AesGcmEncryptor(master).encrypt(k, null));
    }

    @Override
    public ByteBuffer unwrapKey(ByteBuffer wrapped, String keyId) {
      byte[] w = new byte[wrapped.remaining()];
      wrapped.duplicate().get(w);
      return ByteBuffer.wrap(new Ciphers.AesGcmDecryptor(master).decrypt(w, null));
    }
  }

  static byte[] bytesOf(ByteBuffer b) {
    if (b == null) {
      return null;
    }
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    FileKms kms = new FileKms();
    kms.initialize(Map.of("master-key-file", dir.resolve("master.key").toString()));
    File[] files = dir.toFile().listFiles();
    Arrays.sort(files);
    for (File f : files) {
      String n = f.getName();
      if (!n.startsWith("f_") || !n.endsWith(".bin") || n.equals("f_wrapped.bin")) {
        continue;
      }
      String base = n.substring(0, n.length() - 4);
      StandardKeyMetadata km =
          StandardKeyMetadata.parse(ByteBuffer.wrap(Files.readAllBytes(dir.resolve(base + ".km"))));
      AesGcmInputFile in =
          new AesGcmInputFile(
              org.apache.iceberg.Files.localInput(f), bytesOf(km.encryptionKey()), bytesOf(km.aadPrefix()));
      byte[] plain = new byte[(int) in.getLength()];
      try (SeekableInputStream s = in.newStream()) {
        int off = 0;
        while (off < plain.length) {
          int r = s.read(plain, off, plain.length - off);
          if (r < 0) {
            break;
          }
          off += r;
        }
      }
      boolean same = Arrays.equals(plain, Files.readAllBytes(dir.resolve(base + ".plain")));
      System.out.println((same ? "ok " : "MISMATCH ") + base);
    }
    byte[] unwrapped = bytesOf(kms.unwrapKey(ByteBuffer.wrap(Files.readAllBytes(dir.resolve("f_wrapped.bin"))), "m1"));
    boolean same = Arrays.equals(unwrapped, Files.readAllBytes(dir.resolve("f_wrapped.plain")));
    System.out.println((same ? "ok " : "MISMATCH ") + "f_wrapped");

    SecureRandom random = new SecureRandom();
    for (int size : new int[] {0, 1, 1 << 20, (1 << 20) + 1, (5 << 19) + 7}) {
      byte[] plain = new byte[size];
      random.nextBytes(plain);
      byte[] key = new byte[16];
      byte[] aad = new byte[16];
      random.nextBytes(key);
      random.nextBytes(aad);
      String base = "j_" + size;
      AesGcmOutputFile out =
          new AesGcmOutputFile(
              org.apache.iceberg.Files.localOutput(dir.resolve(base + ".bin").toFile()), key, aad);
      try (PositionOutputStream s = out.create()) {
        s.write(plain);
      }
      Files.write(dir.resolve(base + ".plain"), plain);
      Files.write(dir.resolve(base + ".km"), bytesOf(new StandardKeyMetadata(key, aad).buffer()));
    }
    byte[] kek = new byte[16];
    random.nextBytes(kek);
    Files.write(dir.resolve("j_wrapped.plain"), kek);
    Files.write(dir.resolve("j_wrapped.bin"), bytesOf(kms.wrapKey(ByteBuffer.wrap(kek), "m1")));
    System.out.println("done");
  }
}
