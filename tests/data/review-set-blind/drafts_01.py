"""Drafts for set `ing` (ingress-nginx rate limiting, HTTP 429, English). See build.py for the format."""
SET = "ing"
C1, C2 = "rb-ingress-ratelimit#chunk-1", "rb-ingress-ratelimit#chunk-2"
LIM = ["Based on the runbook and inventory excerpts and the alert only; the controller logs of checkout-web were not read."]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "ing-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Ingress, namespace, class, 09:40 UTC, 12.5%, 5%, the alert name, the ConfigMap key with its value, 503 and the log "
            "line are restated exactly from ing1 (query and excerpts), in bullets, bold and code spans; the negative item "
            "restates its own query (24h).",
     "analysis": [
         ("a1", "N", ["ing1"], [],
          "What the alert and the runbook say:\n"
          "- Ingress **checkout-web** (namespace `storefront`, class `nginx-public`) has been answering HTTP 429 since "
          "09:40 UTC; the 429 ratio is **12.5%**, above the 5% threshold of IngressHigh429Rate.\n"
          "- ingress-nginx answers 429 only because the controller ConfigMap sets `limit-req-status-code: \"429\"`; by "
          "default a limited client gets a 503.\n"
          "- Every rejected request is logged by the controller as \"limiting requests, excess: 100.520 by zone\" "
          "followed by the zone name."),
         ("a2", "NEG", ["ing3"], [],
          "No record of annotation changes on the checkout-web Ingress in namespace storefront over the last 24h was found."),
     ],
     "conclusion": ("checkout-web is being rate limited by ingress-nginx: the 429 responses are limit rejections, not "
                    "application errors.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Search the controller log for \"limiting requests\" to see which zone rejects checkout-web's traffic."),
         ("p2", ["a2"], "Ask the storefront team whether the limits on checkout-web were changed outside the change records."),
     ],
     "limits": LIM},

    {"id": "ing-02", "label": "G", "cat": "plural-number", "uns": [],
     "why": "'HTTP 429s', '503s' and 'those 429s' are the stated status codes 429 and 503 with an English plural s (many "
            "responses), not a unit: the number written is the stated code. 12.5%, 5% and the ConfigMap key are restated.",
     "analysis": [
         ("a1", "N", ["ing1"], [],
          "checkout-web is getting HTTP 429s from ingress-nginx at a ratio of 12.5% (threshold 5%). Without "
          "limit-req-status-code: \"429\" in the controller ConfigMap the same rejections would show up as 503s, so the "
          "status code alone already says this is rate limiting rather than a backend failure."),
     ],
     "conclusion": ("The 429s on checkout-web come from the ingress rate limit, not from the service behind it.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Break those 429s down by client address to see whether a few addresses take all the rejections."),
     ],
     "limits": LIM},

    {"id": "ing-03", "label": "G", "cat": "code-block", "uns": [],
     "why": "YAML `key: value` lines in a fenced block with a language tag; each key is stated with that value in the ing1 "
            "excerpts (use-forwarded-headers: \"true\", proxy-real-ip-cidr: \"10.20.0.0/16\", limit-req-status-code: "
            "\"429\"); 10.20.0.4, 10.20.0.5, 20 rps, the ConfigMap and its namespace are stated.",
     "analysis": [
         ("a1", "N", ["ing1"], [],
          "Behind the cloud load balancer every request seems to come from the balancer's own addresses (10.20.0.4, "
          "10.20.0.5), so the limit of 20 rps is shared by all users of checkout-web. The runbook's fix goes into the "
          "ConfigMap ingress-nginx-controller (namespace ingress-nginx):\n\n"
          "```yaml\n"
          "use-forwarded-headers: \"true\"\n"
          "proxy-real-ip-cidr: \"10.20.0.0/16\"\n"
          "limit-req-status-code: \"429\"\n"
          "```"),
     ],
     "conclusion": ("The limit is most likely keyed on the load balancer's addresses rather than on real clients, so "
                    "ordinary checkout-web traffic exhausts it.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Apply the ConfigMap change above and watch whether the 429 ratio of checkout-web falls back under "
                        "the 5% threshold."),
     ],
     "limits": LIM},

    {"id": "ing-04", "label": "G", "cat": "placeholder-filled", "uns": [],
     "why": "kubectl -n <namespace> annotate ingress <ingress> ... filled with storefront and checkout-web from ing1's "
            "query; limit-rps=\"50\", --overwrite, 20, 5, 100 and 'about 2 seconds' are stated.",
     "analysis": [
         ("a1", "N", ["ing1"], [],
          "The per-client limit on checkout-web is the annotation nginx.ingress.kubernetes.io/limit-rps; with limit-rps: "
          "\"20\" and the default nginx.ingress.kubernetes.io/limit-burst-multiplier of 5, a client may burst to 100 "
          "requests before it is rejected."),
     ],
     "conclusion": ("checkout-web's clients go past the 20 rps limit and its burst.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "If the limit is simply too low, raise it on the Ingress itself: `kubectl -n storefront annotate "
                        "ingress checkout-web nginx.ingress.kubernetes.io/limit-rps=\"50\" --overwrite` (the controller "
                        "reloads within about 2 seconds)."),
     ],
     "limits": LIM},

    {"id": "ing-05", "label": "G", "cat": "multiplier", "uns": [],
     "why": "5× and x5 write the stated multiplier (limit-rps multiplied by limit-burst-multiplier, default 5) in digits; "
            "LABELS.md counts multipliers as numbers, and this one is stated. 20, 100, 429 and 12.5% are stated.",
     "analysis": [
         ("a1", "N", ["ing1"], [],
          "The burst allowance is 5× limit-rps (nginx.ingress.kubernetes.io/limit-burst-multiplier defaults to 5): at "
          "limit-rps: \"20\" that is 100 requests per client before ingress-nginx starts answering 429."),
     ],
     "conclusion": ("A 429 ratio of 12.5% on checkout-web means many clients go past both the 20 rps rate and its x5 "
                    "burst.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Before raising the rate, check whether the checkout-web clients hit the burst (5× the rate) or "
                        "the steady rate."),
     ],
     "limits": LIM},

    {"id": "ing-06", "label": "G", "cat": "range", "uns": [],
     "why": "3–6 (en dash), '3 to 6' and 3-6 (hyphen) are ranges whose ends are stated (between 3 and 6 replicas, "
            "minReplicas: 3, maxReplicas: 6); 70%, 10254 and the metric with its label are stated in ing2; 12.5% and 5% "
            "in ing1's query.",
     "analysis": [
         ("a1", "N", ["ing2"], [],
          "In prod-eu-2 the nginx-public controller runs 3–6 replicas under its HPA, with a target of 70% CPU; the "
          "controller pods expose metrics on port 10254."),
         ("a2", "N", ["ing1"], [],
          "checkout-web's 429 ratio is 12.5% against a 5% threshold."),
     ],
     "conclusion": ("The controller has room to scale (3 to 6 replicas), but the 12.5% 429 ratio comes from the rate "
                    "limit itself, so the limit is the first thing to check.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "Use nginx_ingress_controller_requests{status=\"429\"} on port 10254 to count the rejections per "
                        "Ingress across the 3-6 controller pods."),
     ],
     "limits": LIM},

    {"id": "ing-07", "label": "G", "cat": "approx-marker", "uns": [],
     "why": "'~2 s' and '≈ 2 seconds' restate the evidence's 'within about 2 seconds'; 'at least 3' and 'at most 6' "
            "restate minReplicas: 3 / maxReplicas: 6; the command is ing1's with the query's namespace and Ingress.",
     "analysis": [
         ("a1", "N", ["ing1"], [],
          "After `kubectl -n storefront annotate ingress checkout-web nginx.ingress.kubernetes.io/limit-rps=\"50\" "
          "--overwrite` the controller reloads in ~2 s, so the effect on the 12.5% 429 ratio should show almost at once."),
         ("a2", "N", ["ing2"], [],
          "The HPA keeps at least 3 controller replicas (minReplicas: 3) and at most 6 for the nginx-public class."),
     ],
     "conclusion": ("Raising limit-rps on checkout-web is cheap to try: the change is live in ≈ 2 seconds.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "Raise limit-rps to 50 on checkout-web and watch the 429 ratio over the next minutes."),
     ],
     "limits": LIM},

    {"id": "ing-08", "label": "G", "cat": "version-prefix", "uns": [],
     "why": "v1.9.4 and v4.8.3 are the stated versions 1.9.4 and 4.8.3 with a leading v; addresses, 20 rps, the ConfigMap "
            "keys and values are restated.",
     "analysis": [
         ("a1", "N", ["ing2"], [],
          "prod-eu-2 runs ingress-nginx controller v1.9.4 (Helm chart v4.8.3) for the nginx-public class, behind an AWS "
          "NLB."),
         ("a2", "N", ["ing1"], [],
          "Behind a cloud load balancer the limit is keyed on the balancer's own addresses (for example 10.20.0.4 and "
          "10.20.0.5) in $binary_remote_addr, so a limit of 20 rps is shared by every user."),
     ],
     "conclusion": ("On the nginx-public class in prod-eu-2 the rate limit of checkout-web is probably shared by all its "
                    "users.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "Set use-forwarded-headers: \"true\" in the ConfigMap ingress-nginx-controller and restrict the "
                        "trusted sources with proxy-real-ip-cidr: \"10.20.0.0/16\"."),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "ing-09", "label": "U", "cat": "derived", "uns": ["2.5 times"],
     "why": "2.5 (12.5% / 5%) is derived; the evidence states only 12.5% and 5%.",
     "analysis": [
         ("a1", "N", ["ing1"], [],
          "The 429 ratio on checkout-web is 12.5%, 2.5 times the 5% threshold of IngressHigh429Rate; ingress-nginx returns "
          "429 only because limit-req-status-code: \"429\" is set."),
     ],
     "conclusion": ("checkout-web's clients are being rate limited at the ingress.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Search the controller log for \"limiting requests\" entries for checkout-web."),
     ],
     "limits": LIM},

    {"id": "ing-10", "label": "U", "cat": "near-miss-identifier", "uns": ["nginx.ingress.kubernetes.io/limit-connection"],
     "why": "nginx.ingress.kubernetes.io/limit-connection drops the final s of the stated "
            "nginx.ingress.kubernetes.io/limit-connections (singular for plural: a near miss).",
     "analysis": [
         ("a1", "N", ["ing1"], [],
          "Besides nginx.ingress.kubernetes.io/limit-rps, ingress-nginx can cap a client with "
          "nginx.ingress.kubernetes.io/limit-rpm and nginx.ingress.kubernetes.io/limit-connection; any of them may be "
          "set on checkout-web."),
     ],
     "conclusion": ("One of the per-Ingress limits on checkout-web rejects 12.5% of its requests.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "List the annotations of checkout-web in namespace storefront and compare them with the limit of "
                        "20 rps."),
     ],
     "limits": LIM},

    {"id": "ing-11", "label": "U", "cat": "unit-change", "uns": ["20 rpm"],
     "why": "The evidence gives a limit of 20 rps (per second); '20 rpm' changes the unit to per minute, a quantity the "
            "evidence does not state.",
     "analysis": [
         ("a1", "N", ["ing1"], [],
          "Behind the load balancer every request seems to come from 10.20.0.4 or 10.20.0.5, so a limit of 20 rpm is "
          "shared by all users of checkout-web."),
     ],
     "conclusion": ("The limit is keyed on the balancer's addresses, not on real clients.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Set use-forwarded-headers: \"true\" in the ConfigMap ingress-nginx-controller."),
     ],
     "limits": LIM},

    {"id": "ing-12", "label": "U", "cat": "invented-quote", "uns": ["limiting connections, excess: 100.520 by zone"],
     "why": "The quoted log line changes the evidence's words ('limiting requests' becomes 'limiting connections').",
     "analysis": [
         ("a1", "N", ["ing1"], [],
          "Each rejected request shows up in the controller log at error level as “limiting connections, excess: 100.520 "
          "by zone”, followed by the zone name; checkout-web's 429 ratio is 12.5%."),
     ],
     "conclusion": ("The rejections on checkout-web come from the ingress limit.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Count those log lines per zone since 09:40 UTC."),
     ],
     "limits": LIM},

    {"id": "ing-13", "label": "U", "cat": "wrong-version", "uns": ["1.9.5"],
     "why": "The inventory gives ingress-nginx controller 1.9.4; 1.9.5 is a version the evidence does not state.",
     "analysis": [
         ("a1", "N", ["ing2"], [],
          "prod-eu-2 runs ingress-nginx controller 1.9.5 (Helm chart 4.8.3) for nginx-public, with 3 to 6 replicas at a "
          "70% CPU target."),
     ],
     "conclusion": ("The controller itself is scaled normally.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Read nginx_ingress_controller_requests{status=\"429\"} on port 10254 per Ingress."),
     ],
     "limits": LIM},

    {"id": "ing-14", "label": "U", "cat": "disguise", "uns": ["4\u200b0"],
     "why": "A zero-width space inside the number: it displays 40, which the evidence does not state (it gives 20 and 50).",
     "analysis": [
         ("a1", "N", ["ing1"], [],
          "checkout-web's clients share limit-rps: \"20\": with the default multiplier of 5 a client gets a burst of "
          "100 requests, and the 429 ratio is 12.5%."),
     ],
     "conclusion": ("The per-client limit on checkout-web is too low for its traffic.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "`kubectl -n storefront annotate ingress checkout-web nginx.ingress.kubernetes.io/limit-rps=\"4\u200b0\" "
                        "--overwrite`"),
     ],
     "limits": LIM},

    {"id": "ing-15", "label": "U", "cat": "other-citation", "uns": ["1.9.4"],
     "why": "a1 cites ing1 only; the controller version 1.9.4 is stated in ing2, which a1 does not cite.",
     "analysis": [
         ("a1", "N", ["ing1"], [],
          "checkout-web (class nginx-public) gets HTTP 429 from ingress-nginx 1.9.4 because limit-req-status-code: \"429\" "
          "is set; the ratio is 12.5%."),
         ("a2", "N", ["ing2"], [],
          "The HPA keeps between 3 and 6 controller replicas at a 70% CPU target."),
     ],
     "conclusion": ("The 429 responses are rate-limit rejections; the controller has room to scale.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "Check the limit-rps annotation on checkout-web."),
     ],
     "limits": LIM},
]
