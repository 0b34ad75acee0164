/*
 * Java reference (Iceberg 1.10.2 generic data API, no Spark) for frazil's variant interop test.
 * (Its generic Parquet reader needs a newer commons-lang3 than PySpark 3.5 ships for variants,
 * and supports no GEOMETRY / GEOGRAPHY columns, so only Java's writer is used.)
 *
 * Usage:
 *   VariantJava <schema.json> <out.parquet> <rows file>
 *     Writes one Parquet data file with the generic appender; the rows file has one row a
 *     line, fields tab-separated, each "-" (null), a decimal long, or hex bytes (a variant as
 *     metadata-hex:value-hex). Prints "BOUND <id> <lower hex> <upper hex>" for each bound of
 *     the data file's metrics.
 */

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.variants.Variant;
import org.apache.iceberg.variants.VariantMetadata;
import org.apache.iceberg.variants.VariantValue;

public class VariantJava {
  static String hex(ByteBuffer b) {
    ByteBuffer d = b.duplicate();
    StringBuilder s = new StringBuilder();
    while (d.hasRemaining()) {
      s.append(String.format("%02x", d.get() & 0xff));
    }
    return s.toString();
  }

  static ByteBuffer unhex(String h) {
    byte[] out = new byte[h.length() / 2];
    for (int i = 0; i < out.length; i++) {
      out[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
    }
    return ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN);
  }

  public static void main(String[] args) throws Exception {
    Schema schema = SchemaParser.fromJson(new String(Files.readAllBytes(Paths.get(args[0]))));
    GenericAppenderFactory factory = new GenericAppenderFactory(schema, PartitionSpec.unpartitioned());
    DataWriter<Record> writer =
        factory.newDataWriter(
            EncryptedFiles.plainAsEncryptedOutput(org.apache.iceberg.Files.localOutput(args[1])),
            FileFormat.PARQUET,
            null);
    List<Types.NestedField> fields = schema.columns();
    for (String line : Files.readAllLines(Paths.get(args[2]))) {
      String[] parts = line.split("\t", -1);
      GenericRecord row = GenericRecord.create(schema);
      for (int i = 0; i < fields.size(); i++) {
        String p = parts[i];
        Object value = null;
        if (!p.equals("-")) {
          switch (fields.get(i).type().typeId()) {
            case LONG:
              value = Long.parseLong(p);
              break;
            case VARIANT:
              String[] mv = p.split(":");
              VariantMetadata meta = VariantMetadata.from(unhex(mv[0]));
              value = Variant.of(meta, VariantValue.from(meta, unhex(mv[1])));
              break;
            default:
              value = unhex(p);
          }
        }
        row.set(i, value);
      }
      writer.write(row);
    }
    writer.close();
    DataFile file = writer.toDataFile();
    Map<Integer, ByteBuffer> lower = file.lowerBounds();
    Map<Integer, ByteBuffer> upper = file.upperBounds();
    if (lower != null) {
      for (Map.Entry<Integer, ByteBuffer> e : lower.entrySet()) {
        ByteBuffer up = upper == null ? null : upper.get(e.getKey());
        System.out.println(
            "BOUND " + e.getKey() + " " + hex(e.getValue()) + " " + (up == null ? "-" : hex(up)));
      }
    }
  }
}
