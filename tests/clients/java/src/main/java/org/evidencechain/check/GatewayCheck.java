package org.evidencechain.check;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import org.evidencechain.client.ApiClient;
import org.evidencechain.client.ApiException;
import org.evidencechain.client.api.AgentApi;
import org.evidencechain.client.model.DiagnosisDraftsValue;
import org.evidencechain.client.model.LookupAnswer;
import org.evidencechain.client.model.RawHitsValue;
import org.evidencechain.client.model.ReadyAnswer;
import org.evidencechain.client.model.VerdictsValue;

/**
 * What a Java agent does with the generated client, against a running gateway: one lookup (the
 * projection's exact bytes must be the expected ones and hash to projection_sha256), one draft (its
 * verdict), and one lookup without the token (401).
 *
 * <p>Arguments: gateway URL, bearer token, a raw-hits record file, the expected projection file, a
 * draft file. Prints one JSON object of what it saw; exits 1 when the projection is not the expected.
 */
public final class GatewayCheck {
  private GatewayCheck() {}

  public static void main(String[] args) throws Exception {
    String url = args[0];
    String token = args[1];
    String record = Files.readString(Path.of(args[2]), StandardCharsets.UTF_8);
    byte[] expected = Files.readAllBytes(Path.of(args[3]));
    String draft = Files.readString(Path.of(args[4]), StandardCharsets.UTF_8);

    ApiClient client = new ApiClient();
    client.updateBaseUri(url);
    client.setRequestInterceptor(request -> request.header("Authorization", "Bearer " + token));
    ObjectMapper mapper = client.getObjectMapper();
    AgentApi agent = new AgentApi(client);
    Map<String, Object> seen = new LinkedHashMap<>();

    LookupAnswer answer = agent.lookup(mapper.readValue(record, RawHitsValue.class));
    ReadyAnswer ready = answer.getReadyAnswer();
    byte[] projection = ready.getProjection().getBytes(StandardCharsets.UTF_8);
    String digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(projection));
    seen.put("status", ready.getStatus());
    seen.put("projection", ready.getProjection());
    seen.put("projection_sha256_holds", digest.equals(ready.getProjectionSha256()));
    seen.put("projection_is_expected", java.util.Arrays.equals(projection, expected));

    VerdictsValue verdict = agent.check(mapper.readValue(draft, DiagnosisDraftsValue.class));
    seen.put("verdict", verdict.getVerdict().getValue());
    seen.put("verdict_run_id", verdict.getRunId());
    seen.put("draft_sha256", verdict.getDraftSha256());

    ApiClient anonymous = new ApiClient();
    anonymous.updateBaseUri(url);
    try {
      new AgentApi(anonymous).lookup(mapper.readValue(record, RawHitsValue.class));
      seen.put("without_token", 200);
    } catch (ApiException refused) {
      seen.put("without_token", refused.getCode());
    }

    System.out.println(new ObjectMapper().writeValueAsString(seen));
    boolean ok = Boolean.TRUE.equals(seen.get("projection_is_expected"))
        && Boolean.TRUE.equals(seen.get("projection_sha256_holds"))
        && Integer.valueOf(401).equals(seen.get("without_token"));
    System.exit(ok ? 0 : 1);
  }
}
