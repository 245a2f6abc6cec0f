import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

/**
 * A Java client of minipod with java.net.http.HttpClient as it comes: its defaults prefer HTTP/2,
 * so on http:// every HTTP/1.1 request asks to upgrade (Upgrade: h2c). Each argument is one
 * request, "METHOD PATH [BODY]" (a BODY starting with "~" is sent without a length, chunked);
 * each answer is printed as one line: the status, the protocol, then the body.
 */
public class MinipodClient {
  public static void main(String[] args) throws Exception {
    String base = args[0];
    HttpClient client = HttpClient.newHttpClient();
    for (int i = 1; i < args.length; i++) {
      String[] parts = args[i].split(" ", 3);
      HttpRequest.BodyPublisher body = HttpRequest.BodyPublishers.noBody();
      if (parts.length == 3) {
        byte[] bytes = parts[2].replaceFirst("^~", "").getBytes(StandardCharsets.UTF_8);
        body = parts[2].startsWith("~") ? HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(bytes)) : HttpRequest.BodyPublishers.ofByteArray(bytes);
      }
      HttpRequest request = HttpRequest.newBuilder(URI.create(base + parts[1]))
          .method(parts[0], body)
          .header("Authorization", "Bearer java-key")
          .header("Content-Type", "application/json")
          .build();
      HttpResponse<String> answer = client.send(request, HttpResponse.BodyHandlers.ofString());
      System.out.println(answer.statusCode() + " " + answer.version() + " " + answer.body().replace('\n', ' '));
    }
  }
}
