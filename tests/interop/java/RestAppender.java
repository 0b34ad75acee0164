/*
 * A Java reference writer for frazil's REST concurrency test: appends N single-file snapshots to
 * one table through a REST catalog with the Iceberg 1.10 Java library alone (RESTCatalog over the
 * JDK transport of JdkRestCatalog.java, the generic Parquet appender, AppendFiles with its own
 * commit retries). No Spark.
 *
 * Usage: RestAppender <uri> <credential or ""> <namespace> <table> <writer id> <count>
 *
 * The table's schema must be (writer int, seq int, payload string), unpartitioned. Each append
 * writes one row (writer, seq, "java-<writer>-<seq>") and prints "COMMITTED <seq>" once its
 * commit returned. Exits non-zero on any failure, with the exception on stderr.
 */

import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.rest.JdkRestCatalog;

public class RestAppender {
  public static void main(String[] args) throws Exception {
    String uri = args[0];
    String credential = args[1];
    Namespace namespace = Namespace.of(args[2].split("\\."));
    TableIdentifier ident = TableIdentifier.of(namespace, args[3]);
    int writer = Integer.parseInt(args[4]);
    int count = Integer.parseInt(args[5]);

    Map<String, String> props = new HashMap<>();
    props.put("uri", uri);
    if (!credential.isEmpty()) {
      props.put("credential", credential);
    }
    props.put("io-impl", "org.apache.iceberg.hadoop.HadoopFileIO");
    try (JdkRestCatalog catalog = new JdkRestCatalog()) {
      catalog.setConf(new Configuration());
      catalog.initialize("rest", props);
      for (int seq = 0; seq < count; seq++) {
        Table table = catalog.loadTable(ident);
        GenericAppenderFactory factory = new GenericAppenderFactory(table.schema(), table.spec());
        String path =
            table
                .locationProvider()
                .newDataLocation(
                    String.format("java-%d-%d-%s.parquet", writer, seq, UUID.randomUUID()));
        OutputFile out = table.io().newOutputFile(path);
        DataWriter<Record> dataWriter =
            factory.newDataWriter(
                EncryptedFiles.plainAsEncryptedOutput(out), FileFormat.PARQUET, null);
        GenericRecord row = GenericRecord.create(table.schema());
        row.setField("writer", writer);
        row.setField("seq", seq);
        row.setField("payload", "java-" + writer + "-" + seq);
        dataWriter.write(row);
        dataWriter.close();
        DataFile file = dataWriter.toDataFile();
        table.newAppend().appendFile(file).commit();
        System.out.println("COMMITTED " + seq);
        System.out.flush();
      }
    }
  }
}
