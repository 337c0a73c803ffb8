"""Drafts for set `pvc` (Kubernetes PVC stuck Pending, English). See build.py for the format."""
SET = "pvc"
P1, P2 = "rb-pvc-pending#chunk-1", "rb-pvc-pending#chunk-2"
LIM = ["Based on the runbook excerpts and the alert only; the Events of data-postgres-orders-0 were not read."]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "pvc-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Claim, namespace, 35m, cluster, StorageClass, the event, the binding-mode key with its value and the quoted "
            "event text are restated from pvc1; the StatefulSet facts from pvc2; bullets, bold, code spans.",
     "analysis": [
         ("a1", "N", ["pvc1"], [],
          "**What we know**\n"
          "- PVC `data-postgres-orders-0` in `orders-db` has been Pending for 35m on cluster prod-us-1.\n"
          "- Its StorageClass is `gp3-encrypted` and the event is WaitForFirstConsumer.\n"
          "- With `volumeBindingMode: WaitForFirstConsumer`, the event \"waiting for first consumer to be created before "
          "binding\" is normal until a pod is scheduled."),
         ("a2", "N", ["pvc2"], [],
          "postgres-orders uses podManagementPolicy: OrderedReady, so postgres-orders-1 waits until postgres-orders-0 is "
          "Running and Ready."),
     ],
     "conclusion": ("The claim is waiting for its pod: until postgres-orders-0 is scheduled, data-postgres-orders-0 stays "
                    "Pending, and the rest of the StatefulSet waits behind it.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "Find out why postgres-orders-0 is not scheduled before touching the StorageClass."),
     ],
     "limits": LIM},

    {"id": "pvc-02", "label": "G", "cat": "units", "uns": [],
     "why": "35m → 35 minutes, 15s → 15 seconds, 5m → 5 min, 125 MiB/s → 125 MiB per second: the same values in the same "
            "units; 3000 IOPS is restated.",
     "analysis": [
         ("a1", "N", ["pvc1"], [P2],
          "data-postgres-orders-0 has been Pending for 35 minutes. csi-provisioner waits 15 seconds per provisioning "
          "attempt and backs off up to 5 min, so a provisioning failure would have been retried many times by now."),
         ("a2", "N", ["pvc1"], [P1],
          "gp3 volumes get 3000 IOPS and 125 MiB per second unless the StorageClass says otherwise."),
     ],
     "conclusion": ("After 35 minutes a provisioning error would be visible in the claim's events.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Read the Events of data-postgres-orders-0 in orders-db for provisioning errors."),
     ],
     "limits": LIM},

    {"id": "pvc-03", "label": "G", "cat": "digit-grouping", "uns": [],
     "why": "3,000 and 6,000 are the stated 3000 and 6000 with digit grouping; IOPS on 6,000 is the unit its key iops "
            "fixes (LABELS.md fine point); 125 MiB/s, the key alias and the quoted parameters are restated.",
     "analysis": [
         ("a1", "N", ["pvc1"], [],
          "By default the EBS CSI driver gives a gp3 volume 3,000 IOPS and 125 MiB/s."),
         ("a2", "N", ["pvc2"], [],
          "gp3-encrypted overrides that with iops: \"6000\" and throughput: \"250\", i.e. 6,000 IOPS, and encrypts with the "
          "KMS key alias/ebs-prod."),
     ],
     "conclusion": ("The performance parameters of gp3-encrypted are not why the claim is Pending; they matter only once "
                    "it binds.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "Look at the claim's events rather than at IOPS or throughput settings."),
     ],
     "limits": LIM},

    {"id": "pvc-04", "label": "G", "cat": "version-prefix", "uns": [],
     "why": "Kubernetes v1.27 is the stated 1.27 with a leading v; allowVolumeExpansion: true, 200Gi and the names are "
            "restated.",
     "analysis": [
         ("a1", "N", ["pvc2"], [],
          "On Kubernetes v1.27 volumeClaimTemplates cannot be edited in place; to grow a claim, set allowVolumeExpansion: "
          "true on the StorageClass and patch each PVC."),
     ],
     "conclusion": ("Changing the 200Gi template of postgres-orders would not change existing claims.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "If the claims need to grow later, enable allowVolumeExpansion: true on gp3-encrypted and patch each "
                        "PVC."),
     ],
     "limits": LIM},

    {"id": "pvc-05", "label": "G", "cat": "code-block", "uns": [],
     "why": "YAML in a fenced block with a language tag; every key is stated with that value in pvc2 (type: gp3, "
            "encrypted: \"true\", iops: \"6000\", throughput: \"250\", allowVolumeExpansion: true); zones and names "
            "restated from pvc1.",
     "analysis": [
         ("a1", "N", ["pvc2"], [],
          "The StorageClass gp3-encrypted, with the expansion flag the runbook asks for:\n\n"
          "```yaml\n"
          "parameters:\n"
          "  type: gp3\n"
          "  encrypted: \"true\"\n"
          "  iops: \"6000\"\n"
          "  throughput: \"250\"\n"
          "allowVolumeExpansion: true\n"
          "```\n\n"
          "It encrypts with the KMS key alias/ebs-prod."),
         ("a2", "N", ["pvc1"], [],
          "The claim data-postgres-orders-0 waits with WaitForFirstConsumer; a gp3 volume lives in one availability zone "
          "(us-east-1a or us-east-1b in prod-us-1) and only a node in that zone can attach it."),
     ],
     "conclusion": ("The StorageClass parameters look sane; the zone of the node that gets the pod decides where the "
                    "volume is created.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "Check which zone, us-east-1a or us-east-1b, the pod of data-postgres-orders-0 is being scheduled "
                        "into."),
     ],
     "limits": LIM},

    {"id": "pvc-06", "label": "G", "cat": "placeholder-filled", "uns": [],
     "why": "kubectl describe pvc <pvc> -n <namespace> filled with data-postgres-orders-0 and orders-db from pvc1's query; "
            "the quoted event text is the excerpt's.",
     "analysis": [
         ("a1", "N", ["pvc1"], [],
          "The claim's Events say why it is Pending; if they read \"failed to provision volume with StorageClass\", the "
          "CSI driver is the place to look."),
     ],
     "conclusion": ("The Events of the claim decide between a scheduling wait and a provisioning failure.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "`kubectl describe pvc data-postgres-orders-0 -n orders-db`"),
         ("p2", ["a1"], "If the Events show a provisioning failure, read the csi-provisioner log of deploy/ebs-csi-controller."),
     ],
     "limits": LIM},

    {"id": "pvc-07", "label": "G", "cat": "line-continuation", "uns": [],
     "why": "The excerpt's command written over two lines with a backslash continuation inside a bash fence; 15s and 5m "
            "and the quoted event are stated.",
     "analysis": [
         ("a1", "N", ["pvc1"], [],
          "If provisioning failed, the Events of data-postgres-orders-0 would show \"failed to provision volume with "
          "StorageClass\"; csi-provisioner waits 15s per attempt and retries with exponential back-off up to 5m."),
     ],
     "conclusion": ("A failing CSI driver would leave the claim Pending with retries in its log.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Read the provisioner's log:\n\n```bash\nkubectl logs -n kube-system \\\n"
                        "  deploy/ebs-csi-controller -c csi-provisioner\n```"),
     ],
     "limits": LIM},

    {"id": "pvc-08", "label": "G", "cat": "quote-style", "uns": [],
     "why": "‘node(s) exceed max volume count’ and «exceeded quota» are quoted word for word in single curly quotes and "
            "guillemets; 28 EBS volumes is stated.",
     "analysis": [
         ("a1", "N", ["pvc1"], [P2],
          "If the node the scheduler picks already has 28 EBS volumes attached, the scheduler reports ‘node(s) exceed max "
          "volume count’ and both the pod and the claim stay Pending. A ResourceQuota shows up differently, as «exceeded "
          "quota»."),
     ],
     "conclusion": ("Both a volume limit on the node and a quota in orders-db can keep data-postgres-orders-0 Pending.",
                    ["a1"]),
     "actions": [
         ("p1", ["a1"], "Search the events of orders-db for ‘exceed max volume count’ and «exceeded quota»."),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "pvc-09", "label": "U", "cat": "derived", "uns": ["2×"],
     "why": "2× (6000 / 3000) is a derived multiplier; the evidence states only 6000 and 3000.",
     "analysis": [
         ("a1", "N", ["pvc2"], [],
          "gp3-encrypted sets iops: \"6000\" and throughput: \"250\" on the KMS key alias/ebs-prod."),
         ("a2", "N", ["pvc1"], [],
          "By default the EBS CSI driver gives gp3 volumes 3000 IOPS and 125 MiB/s."),
     ],
     "conclusion": ("gp3-encrypted provisions 2× the default IOPS, which has nothing to do with the claim being Pending.",
                    ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "Read the Events of data-postgres-orders-0."),
     ],
     "limits": LIM},

    {"id": "pvc-10", "label": "U", "cat": "conversion", "uns": ["300 seconds"],
     "why": "The evidence says back-off up to 5m; '300 seconds' is a unit conversion it does not state.",
     "analysis": [
         ("a1", "N", ["pvc1"], [],
          "csi-provisioner waits 15s per provisioning attempt and backs off exponentially up to 300 seconds between "
          "retries, so after 35m a failure would have been retried many times."),
     ],
     "conclusion": ("A provisioning failure would be visible in the provisioner log by now.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "kubectl logs -n kube-system deploy/ebs-csi-controller -c csi-provisioner"),
     ],
     "limits": LIM},

    {"id": "pvc-11", "label": "U", "cat": "invented-value", "uns": ["3 replicas"],
     "why": "The number of replicas of postgres-orders is not stated anywhere in the evidence.",
     "analysis": [
         ("a1", "N", ["pvc2"], [],
          "The StatefulSet postgres-orders runs 3 replicas with podManagementPolicy: OrderedReady, so postgres-orders-1 "
          "waits until postgres-orders-0 is Running and Ready."),
     ],
     "conclusion": ("The whole StatefulSet is blocked behind its first pod.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Get postgres-orders-0 scheduled first; the others follow in order."),
     ],
     "limits": LIM},

    {"id": "pvc-12", "label": "U", "cat": "changed-flag", "uns": ["--show-events"],
     "why": "The evidence's command is kubectl describe pvc <pvc> -n <namespace>; the flag --show-events is not stated.",
     "analysis": [
         ("a1", "N", ["pvc1"], [],
          "data-postgres-orders-0 has been Pending for 35m with WaitForFirstConsumer; the Events tell whether it is still "
          "waiting for its pod."),
     ],
     "conclusion": ("The claim's Events decide the next step.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "`kubectl describe pvc data-postgres-orders-0 -n orders-db --show-events`"),
     ],
     "limits": LIM},

    {"id": "pvc-13", "label": "U", "cat": "wrong-version", "uns": ["1.28"],
     "why": "The evidence gives Kubernetes 1.27; 1.28 is a version it does not state.",
     "analysis": [
         ("a1", "N", ["pvc2"], [],
          "On Kubernetes 1.28 volumeClaimTemplates cannot be edited in place; to grow a claim, set allowVolumeExpansion: "
          "true on the StorageClass and patch each PVC."),
     ],
     "conclusion": ("Editing the 200Gi template of postgres-orders will not help the Pending claim.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Leave the volumeClaimTemplates of postgres-orders as they are."),
     ],
     "limits": LIM},

    {"id": "pvc-14", "label": "U", "cat": "rounded", "uns": ["half an hour"],
     "why": "The query says Pending for 35m; 'roughly half an hour' (30 minutes) is a rounded value the evidence does not "
            "state.",
     "analysis": [
         ("a1", "N", ["pvc1"], [],
          "data-postgres-orders-0 in orders-db has been Pending for roughly half an hour with the event "
          "WaitForFirstConsumer."),
     ],
     "conclusion": ("The claim is waiting for its pod to be scheduled.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "kubectl describe pvc data-postgres-orders-0 -n orders-db"),
     ],
     "limits": LIM},

    {"id": "pvc-15", "label": "U", "cat": "disguise", "uns": ["1\u200b000Gi"],
     "why": "A zero-width space inside the number: it displays 1000Gi, which the evidence does not state (it gives "
            "requests.storage: 500Gi).",
     "analysis": [
         ("a1", "N", ["pvc1"], [P2],
          "If orders-db has a ResourceQuota with requests.storage: 1\u200b000Gi and other claims already use most of it, "
          "the claim is rejected with \"exceeded quota\"."),
     ],
     "conclusion": ("A namespace quota is one possible reason for the Pending claim.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "List the ResourceQuota objects of orders-db."),
     ],
     "limits": LIM},
]
