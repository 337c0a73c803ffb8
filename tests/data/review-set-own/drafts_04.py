"""Drafts for set `s3` (S3 PutObject 403 AccessDenied, English). See build.py for the format."""
SET = "s3"
C1, C2 = "sec-s3-403#chunk-1", "sec-s3-403#chunk-2"
LIM = ["Based on the runbook excerpts and the alert only; the bucket policy and CloudTrail were not read."]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "s3-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Plain restatement: the query's bucket, 1312, 10m and role ARN; chunk-1's causes and 15 minutes; the negative item "
            "restates only its own query.",
     "analysis": [
         ("a1", "N", ["s31"], [],
          "report-exporter gets 403 AccessDenied on PutObject to acme-reports-prod: 1312 errors in 10m for role "
          "arn:aws:iam::418277309145:role/report-exporter. The usual causes are a missing s3:PutObject in the IAM policy, an "
          "explicit Deny in the bucket policy, a missing kms:GenerateDataKey for SSE-KMS, or a clock more than 15 minutes off."),
         ("a2", "NEG", ["s33"], [],
          "The knowledge base returned nothing on CloudTrail AccessDenied events for the report-exporter role since "
          "2025-04-02 08:00 UTC."),
     ],
     "conclusion": ("S3 refuses report-exporter's role; the error code of the failures decides which cause applies.",
                    ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "Read the error code of the failed PutObject calls, not only the 403 status."),
     ],
     "limits": LIM},

    {"id": "s3-02", "label": "G", "cat": "units", "uns": [],
     "why": "15 minutes written as 15-minute, 500ms as 500 milliseconds / 500-millisecond: same values, same units.",
     "analysis": [
         ("a1", "N", ["s31"], [C1],
          "S3 rejects requests signed with a clock beyond its 15-minute skew limit with RequestTimeTooSkewed, which is also a "
          "403."),
         ("a2", "N", ["s32"], [],
          "report-exporter's pods sync their clocks with 169.254.169.123 (Amazon Time Sync), and their clock drift alert fires "
          "above 500 milliseconds."),
     ],
     "conclusion": ("A 15-minute skew would have fired the 500-millisecond drift alert long before, so RequestTimeTooSkewed is "
                    "an unlikely cause.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "Check whether the clock drift alert above 500 milliseconds fired for the pods in namespace reporting."),
     ],
     "limits": LIM},

    {"id": "s3-03", "label": "G", "cat": "digit-grouping", "uns": [],
     "why": "3,500 and 5,500 written without grouping (3500, 5500) and 604800 with it (604,800): digit grouping both ways.",
     "analysis": [
         ("a1", "N", ["s31"], [C2],
          "Per prefix S3 takes 3500 PUT/COPY/POST/DELETE and 5500 GET/HEAD requests per second; above that it answers 503 Slow "
          "Down, not 403. Presigned URLs are valid for at most 604,800 seconds through X-Amz-Expires."),
     ],
     "conclusion": ("The 403s are not throttling, which S3 reports as 503 Slow Down.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "If report-exporter uploads through presigned URLs, check X-Amz-Expires against the 604,800-second "
                        "maximum."),
     ],
     "limits": LIM},

    {"id": "s3-04", "label": "G", "cat": "slash-list", "uns": [],
     "why": "IPv4/IPv6 where chunk-2 states IPv4 and IPv6; s3.dualstack.<region>.amazonaws.com filled with s32's "
            "eu-central-1 (the item cites both calls).",
     "analysis": [
         ("a1", "N", ["s31", "s32"], [],
          "report-exporter writes to acme-reports-prod in eu-central-1. The dual-stack endpoint "
          "s3.dualstack.eu-central-1.amazonaws.com accepts IPv4/IPv6, so an aws:SourceIp condition must list both the IPv4 "
          "and the IPv6 CIDRs."),
     ],
     "conclusion": ("An aws:SourceIp condition that lists only IPv4 CIDRs would deny report-exporter's IPv6 requests.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check the bucket policy of acme-reports-prod for aws:SourceIp and aws:SourceVpce conditions."),
     ],
     "limits": LIM},

    {"id": "s3-05", "label": "G", "cat": "version-prefix", "uns": [],
     "why": "JDK17 where s32 says JDK 17 (space dropped); aws-sdk-java 2.21.29 written as v2.21.29; the endpoint id is stated.",
     "analysis": [
         ("a1", "N", ["s32"], [],
          "report-exporter runs on JDK17 with aws-sdk-java v2.21.29 and writes to acme-reports-prod through the VPC endpoint "
          "vpce-0a4c1e9f3b7d21e58."),
         ("a2", "N", ["s31"], [],
          "A bucket policy condition on aws:SourceVpce denies requests that do not come through the VPC endpoint."),
     ],
     "conclusion": ("If the bucket policy pins aws:SourceVpce, it must name vpce-0a4c1e9f3b7d21e58.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1", "a2"], "Compare the aws:SourceVpce value in the policy of acme-reports-prod with "
                              "vpce-0a4c1e9f3b7d21e58."),
     ],
     "limits": LIM},

    {"id": "s3-06", "label": "G", "cat": "quote-style", "uns": [],
     "why": "«Request has expired» and ‘Request has expired’ are word for word; 3600 seconds is stated.",
     "analysis": [
         ("a1", "N", ["s31"], [],
          "An expired presigned URL answers 403 with «Request has expired»; a URL signed with a role session expires with the "
          "session, after 3600 seconds by default."),
     ],
     "conclusion": ("Expired presigned URLs are a source of 403s that the IAM policy cannot explain.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Search the S3 error responses for ‘Request has expired’ and for SignatureDoesNotMatch."),
     ],
     "limits": LIM},

    {"id": "s3-07", "label": "G", "cat": "query-fact", "uns": [],
     "why": "1312, 10m and the role ARN are stated only in the query; the simulate command fills <role-arn>, <bucket> and "
            "<key> from the query and arn:aws:s3:::<bucket>/* .",
     "analysis": [
         ("a1", "N", ["s31"], [],
          "There were 1312 PutObject errors in 10m for role arn:aws:iam::418277309145:role/report-exporter on bucket "
          "acme-reports-prod."),
     ],
     "conclusion": ("S3 refuses role arn:aws:iam::418277309145:role/report-exporter on PutObject.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Simulate the call: `aws iam simulate-principal-policy --policy-source-arn "
                        "arn:aws:iam::418277309145:role/report-exporter --action-names s3:PutObject --resource-arns "
                        "arn:aws:s3:::acme-reports-prod/*`."),
     ],
     "limits": LIM},

    {"id": "s3-08", "label": "G", "cat": "common-term", "uns": [],
     "why": "HTTP, TLS and 5xx are common vocabulary used as names; 403, 503, TLS 1.2 and TLS 1.3 are stated.",
     "analysis": [
         ("a1", "N", ["s31"], [C2],
          "The failures are HTTP 403s, not 5xx: above the per-prefix rate S3 answers 503 Slow Down, and a client limited to "
          "an old TLS version gets a handshake failure, because S3 accepts TLS 1.2 and TLS 1.3."),
     ],
     "conclusion": ("Neither throttling nor TLS explains report-exporter's 403s; the cause is an authorization decision.",
                    ["a1"]),
     "actions": [
         ("p1", ["a1"], "Focus on the IAM, bucket and KMS policies rather than on retries or TLS settings."),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "s3-09", "label": "U", "cat": "disguise", "uns": ["9O seconds"],
     "why": "A letter O in place of a zero: 9O seconds displays 90 seconds; chunk-1 states 15 minutes.",
     "analysis": [
         ("a1", "N", ["s31"], [],
          "S3 rejects a request signed with a clock more than 9O seconds off with RequestTimeTooSkewed, which is also a 403."),
     ],
     "conclusion": ("Clock skew could explain some of report-exporter's 403s.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Read the error codes of the failed PutObject calls."),
     ],
     "limits": LIM},

    {"id": "s3-10", "label": "U", "cat": "conversion", "uns": ["one hour"],
     "why": "chunk-2 gives 3600 seconds; 'one hour' is a conversion the evidence does not state.",
     "analysis": [
         ("a1", "N", ["s31"], [],
          "A URL signed with a role session expires with the session, after one hour by default (DurationSeconds); an "
          "expired URL answers 403 with \"Request has expired\"."),
     ],
     "conclusion": ("Presigned URLs that outlive their session fail with 403.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Search the S3 error responses for Request has expired."),
     ],
     "limits": LIM},

    {"id": "s3-11", "label": "U", "cat": "derived", "uns": ["131"],
     "why": "131 errors per minute is derived from 1312 errors in 10m; the evidence does not state it.",
     "analysis": [
         ("a1", "N", ["s31"], [],
          "report-exporter had 1312 PutObject errors in 10m, about 131 per minute, all 403 AccessDenied on "
          "acme-reports-prod."),
     ],
     "conclusion": ("Every upload attempt of report-exporter is being refused.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Read the error codes of the failed calls."),
     ],
     "limits": LIM},

    {"id": "s3-12", "label": "U", "cat": "wrong-version", "uns": ["2.22.0"],
     "why": "s32 gives aws-sdk-java 2.21.29; 2.22.0 is a version the evidence does not state.",
     "analysis": [
         ("a1", "N", ["s32"], [],
          "report-exporter runs on JDK 17 with aws-sdk-java 2.21.29, numRetries 3 with full-jitter backoff."),
     ],
     "conclusion": ("Retries alone do not fix an authorization failure.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Upgrade report-exporter to aws-sdk-java 2.22.0 once the policy issue is fixed."),
     ],
     "limits": LIM},

    {"id": "s3-13", "label": "U", "cat": "near-miss-identifier", "uns": ["kms:GenerateDataKeys"],
     "why": "kms:GenerateDataKeys is a near miss of the stated kms:GenerateDataKey (an s added).",
     "analysis": [
         ("a1", "N", ["s31"], [],
          "If the object is written with SSE-KMS, the role also needs kms:GenerateDataKeys on the key; without it PutObject "
          "fails with 403."),
     ],
     "conclusion": ("The KMS permission of report-exporter's role must be checked.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check the role's permissions on the KMS key used for SSE-KMS."),
     ],
     "limits": LIM},

    {"id": "s3-14", "label": "U", "cat": "negation", "uns": ["250ms"],
     "why": "'never let ... exceed 250ms' states 250ms, which s32 does not give (the alert fires above 500ms).",
     "analysis": [
         ("a1", "N", ["s32"], [],
          "report-exporter's pods sync their clocks with 169.254.169.123 (Amazon Time Sync); the drift alert fires above "
          "500ms."),
     ],
     "conclusion": ("Clock drift is monitored for report-exporter.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Keep the pods on Amazon Time Sync and never let drift exceed 250ms."),
     ],
     "limits": LIM},

    {"id": "s3-15", "label": "U", "cat": "slash-list", "uns": ["s3:PutObject/s3:PutObjectAcl"],
     "why": "A slash list with an unstated member: s3:PutObjectAcl is not in the evidence (s3:PutObject is).",
     "analysis": [
         ("a1", "N", ["s31"], [],
          "The IAM policy of report-exporter's role must allow s3:PutObject/s3:PutObjectAcl on arn:aws:s3:::<bucket>/*."),
     ],
     "conclusion": ("A missing permission in the IAM policy is the first cause to rule out.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check the IAM policy of the role."),
     ],
     "limits": LIM},

    {"id": "s3-16", "label": "U", "cat": "other-citation", "uns": ["vpce-0a4c1e9f3b7d21e58"],
     "why": "a1 cites s31 only; the endpoint id is stated in s32, which a1 does not cite (a2 does).",
     "analysis": [
         ("a1", "N", ["s31"], [],
          "A bucket policy condition on aws:SourceVpce denies requests that do not come through vpce-0a4c1e9f3b7d21e58."),
         ("a2", "N", ["s32"], [],
          "report-exporter writes to acme-reports-prod in eu-central-1 through a VPC endpoint."),
     ],
     "conclusion": ("The bucket policy's VPC endpoint condition must match the endpoint report-exporter uses.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "Read the aws:SourceVpce condition in the bucket policy."),
     ],
     "limits": LIM},
]
