/*
 * A test-only REST catalog server built from the Java reference alone, for frazil's REST client
 * interop tests: the JDK's built-in com.sun.net.httpserver.HttpServer on 127.0.0.1 routes every
 * request to org.apache.iceberg.rest.CatalogHandlers (the reference's server logic, one static
 * method per endpoint) over a HadoopCatalog on a local warehouse, with the reference's own JSON
 * (RESTObjectMapper). RESTCatalogAdapter is a test class missing from the runtime jar, so the
 * routing is done here.
 *
 * Usage: FrazilRestServer <warehouse dir>
 * Prints "PORT <n>" once listening; stops when stdin closes.
 *
 * Multi-table commits (POST /v1/transactions/commit) validate every table's requirements first
 * and then commit table by table: a HadoopCatalog cannot swap several pointers at once (as the
 * reference's own test adapter does, this is not atomic against concurrent writers).
 */

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.UpdateRequirement;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.requests.CommitTransactionRequest;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.RegisterTableRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;

public class FrazilRestServer {
  private static final String[] ENDPOINTS = {
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
  };

  private static HadoopCatalog catalog;
  private static ObjectMapper mapper;

  public static void main(String[] args) throws Exception {
    catalog = new HadoopCatalog();
    catalog.setConf(new Configuration());
    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.WAREHOUSE_LOCATION, args[0]);
    catalog.initialize("java_rest", props);

    // The reference's own REST mapper (package-private: reached by reflection).
    java.lang.reflect.Method m =
        Class.forName("org.apache.iceberg.rest.RESTObjectMapper").getDeclaredMethod("mapper");
    m.setAccessible(true);
    mapper = (ObjectMapper) m.invoke(null);

    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", FrazilRestServer::handle);
    server.setExecutor(Executors.newFixedThreadPool(4));
    server.start();
    System.out.println("PORT " + server.getAddress().getPort());
    System.out.flush();
    while (System.in.read() != -1) {
      // run until the test closes stdin
    }
    server.stop(0);
    System.exit(0);
  }

  private static void handle(HttpExchange ex) {
    try {
      try {
        Object result = route(ex);
        if (result == null) {
          send(ex, 204, null);
        } else if (result instanceof byte[]) {
          send(ex, 200, (byte[]) result);
        } else {
          send(ex, 200, mapper.writeValueAsBytes(result));
        }
      } catch (Exception e) {
        int code = status(e);
        ErrorResponse err =
            ErrorResponse.builder()
                .responseCode(code)
                .withType(e.getClass().getSimpleName())
                .withMessage(String.valueOf(e.getMessage()))
                .build();
        if (code == 500) {
          e.printStackTrace();
        }
        send(ex, code, mapper.writeValueAsBytes(err));
      }
    } catch (Exception e) {
      e.printStackTrace();
    } finally {
      ex.close();
    }
  }

  private static int status(Exception e) {
    if (e instanceof NoSuchNamespaceException || e instanceof NoSuchTableException) return 404;
    if (e instanceof RouteNotFound) return 404;
    if (e instanceof AlreadyExistsException
        || e instanceof NamespaceNotEmptyException
        || e instanceof CommitFailedException) return 409;
    if (e instanceof ValidationException || e instanceof IllegalArgumentException) return 400;
    if (e instanceof UnsupportedOperationException) return 406;
    return 500;
  }

  static class RouteNotFound extends RuntimeException {
    RouteNotFound(String what) {
      super("no route for " + what);
    }
  }

  private static void send(HttpExchange ex, int code, byte[] body) throws Exception {
    if (body == null || "HEAD".equals(ex.getRequestMethod())) {
      ex.sendResponseHeaders(code, -1);
      return;
    }
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(code, body.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(body);
    }
  }

  private static String body(HttpExchange ex) throws Exception {
    InputStream in = ex.getRequestBody();
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    in.transferTo(buf);
    return buf.toString(StandardCharsets.UTF_8);
  }

  private static Map<String, String> query(HttpExchange ex) {
    Map<String, String> out = new HashMap<>();
    String q = ex.getRequestURI().getRawQuery();
    if (q == null) return out;
    for (String kv : q.split("&")) {
      int eq = kv.indexOf('=');
      if (eq < 0) continue;
      out.put(dec(kv.substring(0, eq)), dec(kv.substring(eq + 1)));
    }
    return out;
  }

  private static String dec(String s) {
    return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  private static Namespace ns(String raw) {
    return Namespace.of(dec(raw).split("\u001f", -1));
  }

  private static Object route(HttpExchange ex) throws Exception {
    String method = ex.getRequestMethod();
    String[] parts = ex.getRequestURI().getRawPath().replaceAll("/+$", "").split("/");
    // parts[0] == "", parts[1] == "v1"
    List<String> p = new ArrayList<>(Arrays.asList(parts).subList(2, parts.length));
    Map<String, String> q = query(ex);
    String what = method + " " + ex.getRequestURI().getRawPath();
    if (p.size() == 1 && p.get(0).equals("config") && method.equals("GET")) {
      StringBuilder sb = new StringBuilder("{\"defaults\":{},\"overrides\":{},\"endpoints\":[");
      for (int i = 0; i < ENDPOINTS.length; i++) {
        sb.append(i == 0 ? "" : ",").append('"').append(ENDPOINTS[i]).append('"');
      }
      return sb.append("]}").toString().getBytes(StandardCharsets.UTF_8);
    }
    if (p.size() == 2 && p.get(0).equals("tables") && p.get(1).equals("rename")) {
      CatalogHandlers.renameTable(catalog, mapper.readValue(body(ex), RenameTableRequest.class));
      return null;
    }
    if (p.size() == 2 && p.get(0).equals("transactions") && p.get(1).equals("commit")) {
      commitTransaction(mapper.readValue(body(ex), CommitTransactionRequest.class));
      return null;
    }
    if (p.isEmpty() || !p.get(0).equals("namespaces")) throw new RouteNotFound(what);
    if (p.size() == 1) {
      if (method.equals("GET")) {
        Namespace parent = q.containsKey("parent") ? ns(q.get("parent")) : Namespace.empty();
        return CatalogHandlers.listNamespaces(
            catalog, parent, q.get("pageToken"), q.getOrDefault("pageSize", null));
      }
      if (method.equals("POST")) {
        return CatalogHandlers.createNamespace(
            catalog, mapper.readValue(body(ex), CreateNamespaceRequest.class));
      }
      throw new RouteNotFound(what);
    }
    Namespace namespace = ns(p.get(1));
    if (p.size() == 2) {
      switch (method) {
        case "GET":
          return CatalogHandlers.loadNamespace(catalog, namespace);
        case "HEAD":
          CatalogHandlers.namespaceExists(catalog, namespace);
          return null;
        case "DELETE":
          CatalogHandlers.dropNamespace(catalog, namespace);
          return null;
        default:
          throw new RouteNotFound(what);
      }
    }
    String kind = p.get(2);
    if (p.size() == 3 && kind.equals("properties") && method.equals("POST")) {
      return CatalogHandlers.updateNamespaceProperties(
          catalog, namespace, mapper.readValue(body(ex), UpdateNamespacePropertiesRequest.class));
    }
    if (p.size() == 3 && kind.equals("register") && method.equals("POST")) {
      return CatalogHandlers.registerTable(
          catalog, namespace, mapper.readValue(body(ex), RegisterTableRequest.class));
    }
    if (!kind.equals("tables")) throw new RouteNotFound(what);
    if (p.size() == 3) {
      if (method.equals("GET")) {
        return CatalogHandlers.listTables(
            catalog, namespace, q.get("pageToken"), q.getOrDefault("pageSize", null));
      }
      if (method.equals("POST")) {
        CreateTableRequest req = mapper.readValue(body(ex), CreateTableRequest.class);
        return req.stageCreate()
            ? CatalogHandlers.stageTableCreate(catalog, namespace, req)
            : CatalogHandlers.createTable(catalog, namespace, req);
      }
      throw new RouteNotFound(what);
    }
    TableIdentifier ident = TableIdentifier.of(namespace, dec(p.get(3)));
    if (p.size() == 5 && p.get(4).equals("metrics") && method.equals("POST")) {
      body(ex);
      return null;
    }
    if (p.size() != 4) throw new RouteNotFound(what);
    switch (method) {
      case "GET":
        return CatalogHandlers.loadTable(catalog, ident);
      case "HEAD":
        CatalogHandlers.tableExists(catalog, ident);
        return null;
      case "POST":
        return CatalogHandlers.updateTable(
            catalog, ident, mapper.readValue(body(ex), UpdateTableRequest.class));
      case "DELETE":
        if ("true".equals(q.get("purgeRequested"))) {
          CatalogHandlers.purgeTable(catalog, ident);
        } else {
          CatalogHandlers.dropTable(catalog, ident);
        }
        return null;
      default:
        throw new RouteNotFound(what);
    }
  }

  private static synchronized void commitTransaction(CommitTransactionRequest request) {
    // Check every table's requirements before changing any.
    for (UpdateTableRequest change : request.tableChanges()) {
      TableMetadata current =
          ((BaseTable) catalog.loadTable(change.identifier())).operations().current();
      for (UpdateRequirement req : change.requirements()) {
        req.validate(current);
      }
    }
    for (UpdateTableRequest change : request.tableChanges()) {
      CatalogHandlers.updateTable(
          catalog,
          change.identifier(),
          new UpdateTableRequest(change.requirements(), change.updates()));
    }
  }
}
