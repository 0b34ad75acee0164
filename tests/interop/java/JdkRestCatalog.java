/*
 * The Java reference's REST catalog (org.apache.iceberg.rest.RESTCatalog: its session catalog,
 * OAuth2 manager, request and response models, error handlers and table operations) with the
 * JDK's java.net.http client as its transport, for frazil's interop tests.
 *
 * Why: the Iceberg 1.10.2 Spark runtime jar on PyPI (snowpark-connect-deps-iceberg) was
 * published without its shaded Apache HttpClient 5 classes, and no reachable registry ships
 * HttpClient 5.4+ (Debian bookworm has 5.2, which lacks the TlsSocketStrategy the runtime's
 * HTTPClient uses). Everything above the transport is the reference's own code: this class only
 * replaces org.apache.iceberg.rest.HTTPClient, extending the same BaseHTTPClient.
 *
 * Use: Spark's `spark.sql.catalog.<name>.catalog-impl=org.apache.iceberg.rest.JdkRestCatalog`
 * (with this class on the driver's class path), or `new JdkRestCatalog()` then `initialize`.
 * It lives in org.apache.iceberg.rest for RESTObjectMapper and ImmutableHTTPRequest, which are
 * package-private there.
 */
package org.apache.iceberg.rest;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.iceberg.catalog.SessionCatalog;
import org.apache.iceberg.exceptions.RESTException;
import org.apache.iceberg.rest.auth.AuthSession;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.rest.responses.ErrorResponseParser;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;

public class JdkRestCatalog extends RESTCatalog {
  public JdkRestCatalog() {
    super(SessionCatalog.SessionContext.createEmpty(), JdkTransport::new);
  }

  /** The transport: one pooled java.net.http client per catalog, shared by its auth sessions. */
  static final class JdkTransport extends BaseHTTPClient {
    private final URI baseUri;
    private final HttpClient client;
    private final Map<String, String> baseHeaders;
    private final AuthSession session;
    private final ObjectMapper mapper = RESTObjectMapper.mapper();

    JdkTransport(Map<String, String> properties) {
      this(
          URI.create(properties.get("uri")),
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_1_1)
              .connectTimeout(Duration.ofSeconds(30))
              .build(),
          headers(properties),
          AuthSession.EMPTY);
    }

    private JdkTransport(
        URI baseUri, HttpClient client, Map<String, String> baseHeaders, AuthSession session) {
      this.baseUri = baseUri;
      this.client = client;
      this.baseHeaders = baseHeaders;
      this.session = session;
    }

    private static Map<String, String> headers(Map<String, String> properties) {
      Map<String, String> out = new LinkedHashMap<>();
      properties.forEach(
          (k, v) -> {
            if (k.startsWith("header.")) {
              out.put(k.substring("header.".length()), v);
            }
          });
      return out;
    }

    @Override
    public RESTClient withAuthSession(AuthSession newSession) {
      return new JdkTransport(baseUri, client, baseHeaders, newSession);
    }

    @Override
    protected HTTPRequest buildRequest(
        HTTPRequest.HTTPMethod method,
        String path,
        Map<String, String> queryParams,
        Map<String, String> headers,
        Object body) {
      Map<String, String> all = new LinkedHashMap<>(baseHeaders);
      if (headers != null) {
        all.putAll(headers);
      }
      boolean form = body instanceof Map;
      all.putIfAbsent("Content-Type", form ? "application/x-www-form-urlencoded" : "application/json");
      all.putIfAbsent("Accept", "application/json");
      ImmutableHTTPRequest request =
          ImmutableHTTPRequest.builder()
              .baseUri(baseUri)
              .mapper(mapper)
              .method(method)
              .path(path)
              .body(body)
              .queryParameters(queryParams == null ? Map.of() : queryParams)
              .headers(HTTPHeaders.of(all))
              .build();
      return session.authenticate(request);
    }

    @Override
    protected <T extends RESTResponse> T execute(
        HTTPRequest req,
        Class<T> responseType,
        Consumer<ErrorResponse> errorHandler,
        Consumer<Map<String, String>> responseHeaders) {
      return execute(req, responseType, errorHandler, responseHeaders, null);
    }

    @Override
    protected <T extends RESTResponse> T execute(
        HTTPRequest req,
        Class<T> responseType,
        Consumer<ErrorResponse> errorHandler,
        Consumer<Map<String, String>> responseHeaders,
        ParserContext parserContext) {
      String encoded = req.body() == null ? null : req.encodedBody();
      HttpRequest.BodyPublisher publisher =
          encoded == null
              ? HttpRequest.BodyPublishers.noBody()
              : HttpRequest.BodyPublishers.ofString(encoded);
      HttpRequest.Builder builder =
          HttpRequest.newBuilder(req.requestUri())
              .timeout(Duration.ofMinutes(5))
              .method(req.method().name(), publisher);
      for (HTTPHeaders.HTTPHeader h : req.headers().entries()) {
        builder.header(h.name(), h.value());
      }
      HttpResponse<String> response;
      try {
        response = client.send(builder.build(), HttpResponse.BodyHandlers.ofString());
      } catch (IOException e) {
        throw new RESTException(e, "Error occurred while processing %s request", req.method());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new RESTException(e, "Interrupted during %s request", req.method());
      }
      if (responseHeaders != null) {
        Map<String, String> seen = new LinkedHashMap<>();
        response.headers().map().forEach((k, v) -> seen.put(k, String.join(",", v)));
        responseHeaders.accept(seen);
      }
      int code = response.statusCode();
      String text = response.body();
      if (code < 200 || code >= 300) {
        ErrorResponse error;
        try {
          error = ErrorResponseParser.fromJson(text);
        } catch (RuntimeException e) {
          error =
              ErrorResponse.builder()
                  .responseCode(code)
                  .withMessage(text == null || text.isEmpty() ? "HTTP " + code : text)
                  .build();
        }
        errorHandler.accept(error);
        // The handlers throw; reaching here means one did not.
        throw new RESTException("Unhandled error: %s", error);
      }
      if (code == 204 || text == null || text.isEmpty() || responseType == null) {
        return null;
      }
      try {
        if (parserContext != null && !parserContext.isEmpty()) {
          return mapper
              .readerFor(responseType)
              .with(parserContext.toInjectableValues())
              .readValue(text);
        }
        return mapper.readValue(text, responseType);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public void close() {
      session.close();
    }
  }
}
