/*
 * Test oracle for frazil's interop tests: answers questions about single values and partition
 * transforms using the public API of the Apache Iceberg Java library.
 *
 * Protocol (UTF-8, one request per line, fields separated by TAB):
 *
 *   transform  <type> <transform> <json>  -> OK <result type> TAB <result json>
 *   transform_bytes <type> <transform> <hex>
 *                                         -> the same, the value given in its binary form
 *   to_bytes   <type> <json>              -> OK <lowercase hex of Conversions.toByteBuffer>
 *   from_bytes <type> <hex>               -> OK <json of Conversions.fromByteBuffer>
 *   rebytes    <type> <hex>               -> OK <hex of toByteBuffer(fromByteBuffer(hex))>
 *   json       <type> <json>              -> OK <json written back by SingleValueParser.toJson>
 *   type       <type>                     -> OK <Type.toString()>
 *   metrics    <schema json> <filter json> <record count> <metrics json>
 *                                         -> OK <inclusive> TAB <strict>: InclusiveMetricsEvaluator
 *                                            and StrictMetricsEvaluator on a data file with those
 *                                            metrics (the filter read by ExpressionParser with
 *                                            the schema; metrics json: value_counts,
 *                                            null_value_counts, nan_value_counts as {"id": n},
 *                                            lower_bounds, upper_bounds as {"id": "hex"}, each
 *                                            absent or null for no map)
 *   sync                                  -> SYNC   (and the output is flushed)
 *
 * <type> is either a primitive type string ("decimal(9,2)", "fixed[16]", "timestamptz_ns", ...)
 * or, when it starts with '{', an Iceberg type in its JSON schema form (struct, list or map).
 * A JSON null value is passed through transforms and codecs as null.
 *
 * Every request gets exactly one answer line. A request that fails answers
 * "ERROR <exception class>: <message>" and the process carries on.
 */

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.Function;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.SingleValueParser;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.ExpressionParser;
import org.apache.iceberg.expressions.InclusiveMetricsEvaluator;
import org.apache.iceberg.expressions.StrictMetricsEvaluator;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.JsonNode;
import org.apache.iceberg.transforms.Transform;
import org.apache.iceberg.transforms.Transforms;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.JsonUtil;
import org.apache.iceberg.util.SerializableFunction;

public final class FrazilOracle {
  /** The field id given to the wrapper field used to parse a bare list or map type. */
  private static final int WRAPPER_ID = Integer.MAX_VALUE;

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private final Map<String, Type> types = new HashMap<>();
  private final Map<String, SerializableFunction<Object, Object>> bound = new HashMap<>();
  private final Map<String, Type> resultTypes = new HashMap<>();

  private FrazilOracle() {}

  public static void main(String[] args) throws Exception {
    FrazilOracle oracle = new FrazilOracle();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
    BufferedWriter out =
        new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) {
        continue;
      }
      if (line.equals("sync")) {
        out.write("SYNC\n");
        out.flush();
        continue;
      }
      String answer;
      try {
        answer = "OK " + oracle.answer(line.split("\t", -1));
      } catch (Throwable t) {
        answer = "ERROR " + describe(t);
      }
      out.write(answer);
      out.write('\n');
    }
    out.flush();
  }

  private static String describe(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (sb.length() > 0) {
        sb.append(" <- ");
      }
      sb.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
      if (c.getCause() == c) {
        break;
      }
    }
    return sb.toString().replace('\n', ' ').replace('\r', ' ').replace('\t', ' ');
  }

  private String answer(String[] f) throws Exception {
    switch (f[0]) {
      case "transform":
      case "transform_bytes":
        {
          need(f, 4);
          Type type = type(f[1]);
          String key = f[1] + "\t" + f[2];
          SerializableFunction<Object, Object> fn = bound.get(key);
          if (fn == null) {
            @SuppressWarnings("unchecked")
            Transform<Object, Object> t = (Transform<Object, Object>) Transforms.fromString(type, f[2]);
            if (!t.canTransform(type)) {
              throw new IllegalArgumentException("cannot apply " + f[2] + " to " + type);
            }
            fn = t.bind(type);
            bound.put(key, fn);
            resultTypes.put(key, t.getResultType(type));
          }
          Type resultType = resultTypes.get(key);
          Object value =
              f[0].equals("transform")
                  ? SingleValueParser.fromJson(type, parse(f[3]))
                  : (f[3].equals("null") ? null : fromBytes(type, f[3]));
          Object result = value == null ? null : fn.apply(value);
          return resultType + "\t" + SingleValueParser.toJson(resultType, result);
        }
      case "to_bytes":
        {
          need(f, 3);
          Type type = type(f[1]);
          Object value = SingleValueParser.fromJson(type, parse(f[2]));
          if (value == null) {
            return "null";
          }
          return hex(Conversions.toByteBuffer(type, value));
        }
      case "from_bytes":
        {
          need(f, 3);
          Type type = type(f[1]);
          return SingleValueParser.toJson(type, fromBytes(type, f[2]));
        }
      case "rebytes":
        {
          need(f, 3);
          Type type = type(f[1]);
          return hex(Conversions.toByteBuffer(type, fromBytes(type, f[2])));
        }
      case "json":
        {
          need(f, 3);
          Type type = type(f[1]);
          Object value = SingleValueParser.fromJson(type, parse(f[2]));
          return SingleValueParser.toJson(type, value);
        }
      case "type":
        need(f, 2);
        return type(f[1]).toString();
      case "metrics":
        {
          need(f, 5);
          Schema schema = SchemaParser.fromJson(f[1]);
          Expression filter = ExpressionParser.fromJson(f[2], schema);
          long records = Long.parseLong(f[3]);
          JsonNode m = parse(f[4]);
          Metrics metrics =
              new Metrics(
                  records,
                  null,
                  counts(m.get("value_counts")),
                  counts(m.get("null_value_counts")),
                  counts(m.get("nan_value_counts")),
                  bounds(m.get("lower_bounds")),
                  bounds(m.get("upper_bounds")));
          DataFile file =
              DataFiles.builder(PartitionSpec.unpartitioned())
                  .withPath("oracle.parquet")
                  .withFormat(FileFormat.PARQUET)
                  .withFileSizeInBytes(1)
                  .withMetrics(metrics)
                  .build();
          boolean inclusive = new InclusiveMetricsEvaluator(schema, filter).eval(file);
          boolean strict = new StrictMetricsEvaluator(schema, filter).eval(file);
          return inclusive + "\t" + strict;
        }
      default:
        throw new IllegalArgumentException("unknown request: " + f[0]);
    }
  }

  /** A metrics map keyed by field id ({"id": value}); null when absent. */
  private static <V> Map<Integer, V> byId(JsonNode node, Function<JsonNode, V> value) {
    if (node == null || node.isNull()) {
      return null;
    }
    Map<Integer, V> out = new HashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      out.put(Integer.parseInt(e.getKey()), value.apply(e.getValue()));
    }
    return out;
  }

  private static Map<Integer, Long> counts(JsonNode node) {
    return byId(node, JsonNode::asLong);
  }

  private static Map<Integer, ByteBuffer> bounds(JsonNode node) {
    return byId(
        node, v -> ByteBuffer.wrap(unhex(v.asText())).order(ByteOrder.LITTLE_ENDIAN));
  }

  private static Object fromBytes(Type type, String hex) {
    ByteBuffer buffer = ByteBuffer.wrap(unhex(hex)).order(ByteOrder.LITTLE_ENDIAN);
    return Conversions.fromByteBuffer(type, buffer);
  }

  private static void need(String[] f, int n) {
    if (f.length != n) {
      throw new IllegalArgumentException(
          "request " + f[0] + " takes " + (n - 1) + " arguments, got " + (f.length - 1));
    }
  }

  private static JsonNode parse(String json) throws Exception {
    return JsonUtil.mapper().readTree(json);
  }

  private Type type(String text) {
    Type cached = types.get(text);
    if (cached != null) {
      return cached;
    }
    Type type;
    if (text.startsWith("{")) {
      JsonNode node;
      try {
        node = parse(text);
      } catch (Exception e) {
        throw new IllegalArgumentException("not a JSON type: " + text, e);
      }
      String kind = node.path("type").asText();
      if (kind.equals("struct")) {
        type = SchemaParser.fromJson(node).asStruct();
      } else {
        // SchemaParser reads whole schemas only: wrap the list or map in a one-field struct.
        String wrapped =
            "{\"type\":\"struct\",\"fields\":[{\"id\":"
                + WRAPPER_ID
                + ",\"name\":\"v\",\"required\":false,\"type\":"
                + text
                + "}]}";
        Schema schema = SchemaParser.fromJson(wrapped);
        type = schema.findType(WRAPPER_ID);
      }
    } else {
      type = Types.fromPrimitiveString(text);
    }
    types.put(text, type);
    return type;
  }

  private static String hex(ByteBuffer buffer) {
    ByteBuffer b = buffer.duplicate();
    StringBuilder sb = new StringBuilder(b.remaining() * 2);
    while (b.hasRemaining()) {
      int v = b.get() & 0xff;
      sb.append(HEX[v >>> 4]).append(HEX[v & 15]);
    }
    return sb.toString();
  }

  private static byte[] unhex(String text) {
    if (text.length() % 2 != 0) {
      throw new IllegalArgumentException("odd-length hex: " + text);
    }
    byte[] out = new byte[text.length() / 2];
    for (int i = 0; i < out.length; i++) {
      int hi = Character.digit(text.charAt(2 * i), 16);
      int lo = Character.digit(text.charAt(2 * i + 1), 16);
      if (hi < 0 || lo < 0) {
        throw new IllegalArgumentException("not hex: " + text);
      }
      out[i] = (byte) ((hi << 4) | lo);
    }
    return out;
  }
}
