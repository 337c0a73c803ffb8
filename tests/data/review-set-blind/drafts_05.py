"""Drafts for set `mtls` (Istio mTLS handshake failures, English). See build.py for the format."""
SET = "mtls"
M2, M3 = "kb-istio-mtls#chunk-2", "kb-istio-mtls#chunk-3"
LIM = ["Based on the runbook and inventory excerpts and the alert only; the sidecars' certificates were not inspected."]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "mt-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Date and time, services, namespace, 503, UF,URX and CERTIFICATE_VERIFY_FAILED are restated from mt1's query; "
            "the STRICT date, the host:port and port come from mt2; the conclusion is based on both items.",
     "analysis": [
         ("a1", "N", ["mt1"], [],
          "Since 2024-06-11 14:05 UTC, calls from orders-api to inventory-grpc in namespace retail fail with 503 and "
          "response flags UF,URX, and the TLS error is CERTIFICATE_VERIFY_FAILED. Per the runbook, that combination means "
          "the client sidecar could not complete the mTLS handshake."),
         ("a2", "N", ["mt2"], [],
          "The retail namespace has had PeerAuthentication default in STRICT mode since 2024-05-27; orders-api reaches "
          "inventory-grpc as `inventory-grpc.retail.svc.cluster.local:9090`."),
     ],
     "conclusion": ("STRICT mode has been on since 2024-05-27, so failures that began on 2024-06-11 point to a certificate "
                    "problem rather than to a missing sidecar.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "Check the certificates an orders-api sidecar holds with istioctl proxy-config secret."),
     ],
     "limits": LIM},

    {"id": "mt-02", "label": "G", "cat": "slash-list", "uns": [],
     "why": "UF/URX (stated as UF,URX), 'ca-cert.pem / ca-key.pem / root-cert.pem / cert-chain.pem' and STRICT/PERMISSIVE are "
            "slash lists whose members are each stated in mt1.",
     "analysis": [
         ("a1", "N", ["mt1"], [],
          "orders-api's requests to inventory-grpc fail with 503 and flags UF/URX: the client sidecar could not finish the "
          "mTLS handshake. When istiod restarts with a new cacerts secret (ca-cert.pem / ca-key.pem / root-cert.pem / "
          "cert-chain.pem in istio-system), workloads that still hold certificates from the old root fail with "
          "CERTIFICATE_VERIFY_FAILED."),
     ],
     "conclusion": ("A root change in istio-system fits the CERTIFICATE_VERIFY_FAILED errors between orders-api and "
                    "inventory-grpc.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "During a root change the STRICT/PERMISSIVE choice matters: PERMISSIVE accepts both plaintext and "
                        "mTLS during a migration."),
     ],
     "limits": LIM},

    {"id": "mt-03", "label": "G", "cat": "units", "uns": [],
     "why": "24h → 24 hours and 48h → 48 hours: the same values in the same unit; 80% and port 15012 are restated.",
     "analysis": [
         ("a1", "N", ["mt1"], [],
          "Workload certificates live 24 hours and istiod rotates them at about 80% of their lifetime; a sidecar that "
          "cannot reach istiod on port 15012 keeps serving an expiring certificate."),
     ],
     "conclusion": ("A sidecar of orders-api cut off from istiod would fail within 24 hours of its last rotation.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "When rotating the root, keep both roots in root-cert.pem for at least 48 hours."),
     ],
     "limits": LIM},

    {"id": "mt-04", "label": "G", "cat": "version-prefix", "uns": [],
     "why": "Istio v1.20.3 and Envoy v1.28.1 are the stated 1.20.3 and 1.28.1 with a leading v; revision, replica count "
            "and namespace are restated from mt2.",
     "analysis": [
         ("a1", "N", ["mt2"], [],
          "The control plane is Istio v1.20.3 (revision 1-20-3) with 2 istiod replicas in istio-system; the proxies run "
          "Envoy v1.28.1."),
         ("a2", "N", ["mt1"], [],
          "A workload certificate signed by another root is one of the common causes of CERTIFICATE_VERIFY_FAILED."),
     ],
     "conclusion": ("Both istiod replicas must serve certificates from the same root.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "Compare the roots served by the 2 istiod replicas of revision 1-20-3."),
     ],
     "limits": LIM},

    {"id": "mt-05", "label": "G", "cat": "placeholder-filled", "uns": [],
     "why": "istioctl x describe pod <pod> -n <namespace> and kubectl rollout restart deployment/<deployment> -n "
            "<namespace> filled with retail, orders-api and inventory-grpc from mt1's query; <pod> left as is.",
     "analysis": [
         ("a1", "N", ["mt1"], [],
          "Workloads that still hold certificates from the old root fail with CERTIFICATE_VERIFY_FAILED until their "
          "sidecars restart."),
     ],
     "conclusion": ("Restarting the sidecars of orders-api and inventory-grpc should clear the handshake errors if the "
                    "root changed.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Run `istioctl x describe pod <pod> -n retail` on a failing orders-api pod."),
         ("p2", ["a1"], "Then `kubectl rollout restart deployment/orders-api -n retail` and `kubectl rollout restart "
                        "deployment/inventory-grpc -n retail`."),
     ],
     "limits": LIM},

    {"id": "mt-06", "label": "G", "cat": "common-term", "uns": [],
     "why": "gRPC, HTTP/2, TLS, mTLS, P99 and CPU are common vocabulary used as names, not stated as facts with values; "
            "9090, 100m, 128Mi, 2000m and 1Gi are restated from mt2.",
     "analysis": [
         ("a1", "N", ["mt2"], [],
          "inventory-grpc serves gRPC on port 9090; its sidecar requests 100m CPU / 128Mi memory and is limited to "
          "2000m / 1Gi."),
         ("a2", "N", ["mt1"], [],
          "The TLS handshake between the sidecars fails; a PeerAuthentication in STRICT mode needs a sidecar on the "
          "client side too."),
     ],
     "conclusion": ("The failure is in the mTLS handshake between the sidecars, before any gRPC request over HTTP/2 "
                    "reaches inventory-grpc, so its P99 latency and CPU usage are not the place to look.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "Check the client sidecar of orders-api first."),
     ],
     "limits": LIM},

    {"id": "mt-07", "label": "G", "cat": "approx-marker", "uns": [],
     "why": "'~80%' restates 'about 80%'; '≥ 48h' and '48h+' restate 'at least 48h'; 24h and 15012 are restated.",
     "analysis": [
         ("a1", "N", ["mt1"], [],
          "Workload certificates live 24h and istiod rotates them at ~80% of their lifetime; a sidecar that cannot reach "
          "istiod on port 15012 keeps an expiring certificate."),
     ],
     "conclusion": ("If the root of trust was changed, the old and new roots must overlap long enough for every sidecar "
                    "to rotate.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Keep both roots in root-cert.pem for ≥ 48h (48h+ is safer for slow rollouts), then roll the "
                        "sidecars."),
     ],
     "limits": LIM},

    {"id": "mt-08", "label": "G", "cat": "quote-style", "uns": [],
     "why": "The error text is quoted word for word in single curly quotes with two letters capitalised (case) and a full "
            "stop added at the end; «CERTIFICATE_VERIFY_FAILED» and «STRICT» are short terms in guillemets.",
     "analysis": [
         ("a1", "N", ["mt1"], [M2],
          "The 503 comes with ‘Upstream connect error or disconnect/reset before headers. Reset reason: connection "
          "failure, transport failure reason: TLS error.’, which the runbook reads as a failed mTLS handshake in the "
          "client sidecar, here with «CERTIFICATE_VERIFY_FAILED»."),
     ],
     "conclusion": ("orders-api's sidecar rejects the certificate of inventory-grpc; a «STRICT» PeerAuthentication alone "
                    "would not produce a verify failure.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Compare the roots held by the orders-api and inventory-grpc sidecars with istioctl proxy-config secret <pod> "
                        "-n retail."),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "mt-09", "label": "U", "cat": "derived", "uns": ["19.2h"],
     "why": "19.2h (80% of 24h) is derived; the evidence states only 24h and about 80%.",
     "analysis": [
         ("a1", "N", ["mt1"], [],
          "Workload certificates live 24h and istiod rotates them at about 80% of their lifetime, i.e. after roughly "
          "19.2h."),
     ],
     "conclusion": ("A sidecar that missed its rotation would start failing later the same day.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check that the sidecars of orders-api can reach istiod on port 15012."),
     ],
     "limits": LIM},

    {"id": "mt-10", "label": "U", "cat": "near-miss-identifier", "uns": ["cert_chain.pem"],
     "why": "cert_chain.pem changes the separator of the stated cert-chain.pem (a near miss).",
     "analysis": [
         ("a1", "N", ["mt1"], [],
          "When istiod restarts with a new cacerts secret (ca-cert.pem, ca-key.pem, root-cert.pem and cert_chain.pem in "
          "istio-system), workloads with certificates from the old root fail with CERTIFICATE_VERIFY_FAILED."),
     ],
     "conclusion": ("A root change would explain the errors between orders-api and inventory-grpc.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "kubectl rollout restart deployment/orders-api -n retail"),
     ],
     "limits": LIM},

    {"id": "mt-11", "label": "U", "cat": "wrong-version", "uns": ["1.21"],
     "why": "'upgrade to Istio 1.21' recommends a version the evidence does not give (LABELS.md: any unstated version is "
            "ungrounded, recommendations included).",
     "analysis": [
         ("a1", "N", ["mt2"], [],
          "The control plane is Istio 1.20.3 (revision 1-20-3) with 2 istiod replicas; the proxies run Envoy 1.28.1."),
     ],
     "conclusion": ("The mesh runs revision 1-20-3 of the control plane.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Once the incident is closed, upgrade the control plane from 1.20.3 to Istio 1.21."),
     ],
     "limits": LIM},

    {"id": "mt-12", "label": "U", "cat": "invented-value", "uns": ["3 replicas"],
     "why": "The inventory says istiod runs with 2 replicas; '3 replicas' is a count the evidence does not state.",
     "analysis": [
         ("a1", "N", ["mt2"], [],
          "Control plane: Istio 1.20.3, istiod with 3 replicas in istio-system; PeerAuthentication default has been STRICT "
          "in retail since 2024-05-27."),
     ],
     "conclusion": ("istiod is replicated, so its replicas could serve different roots after a restart.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Compare the cacerts each istiod replica loaded."),
     ],
     "limits": LIM},

    {"id": "mt-13", "label": "U", "cat": "negation", "uns": ["72h"],
     "why": "'do not keep both roots beyond 72h' still states 72h, which the evidence does not give.",
     "analysis": [
         ("a1", "N", ["mt1"], [],
          "For a gradual root change keep both roots in root-cert.pem for at least 48h; PERMISSIVE mode accepts both "
          "plaintext and mTLS during a migration."),
     ],
     "conclusion": ("Roots that did not overlap long enough would fit the CERTIFICATE_VERIFY_FAILED errors.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Put both roots back into root-cert.pem for at least 48h, but do not keep both roots beyond 72h."),
     ],
     "limits": LIM},

    {"id": "mt-14", "label": "U", "cat": "disguise", "uns": ["c\u0430-bundle.pem"],
     "why": "A Cyrillic а inside the file name: it displays ca-bundle.pem, which the evidence does not state (it lists "
            "ca-cert.pem, ca-key.pem, root-cert.pem, cert-chain.pem).",
     "analysis": [
         ("a1", "N", ["mt1"], [],
          "Workloads that still hold certificates from the old root fail with CERTIFICATE_VERIFY_FAILED until their "
          "sidecars restart."),
     ],
     "conclusion": ("The root of trust in istio-system probably changed.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check that root-cert.pem and c\u0430-bundle.pem in istio-system come from the same root before "
                        "restarting the sidecars."),
     ],
     "limits": LIM},

    {"id": "mt-15", "label": "U", "cat": "other-citation", "uns": ["1.28.1"],
     "why": "a1 cites mt1 only; the Envoy version 1.28.1 is stated in mt2, which a1 does not cite.",
     "analysis": [
         ("a1", "N", ["mt1"], [],
          "The client sidecar of orders-api (Envoy 1.28.1) cannot complete the mTLS handshake with inventory-grpc: 503, "
          "UF,URX, CERTIFICATE_VERIFY_FAILED."),
         ("a2", "N", ["mt2"], [],
          "PeerAuthentication default has been STRICT in retail since 2024-05-27."),
     ],
     "conclusion": ("The failure is a certificate problem, not a mode change.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "istioctl proxy-config secret <pod> -n retail on an orders-api pod."),
     ],
     "limits": LIM},
]
