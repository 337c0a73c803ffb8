"""Drafts for set `hpa` (HPA not scaling, Chinese). See build.py for the format."""
SET = "hpa"
C1, C2 = "k8s-hpa#chunk-1", "k8s-hpa#chunk-2"
LIM = ["仅基于知识库检索结果与告警信息，未实际执行 kubectl 查看 checkout-web 的 HPA 状态。"]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "hp-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Plain restatement of hp1's query (4, 20, 180%, 70%, the pod and the event reason) and chunk-1's condition names; "
            "the negative item restates only its own query.",
     "analysis": [
         ("a1", "N", ["hp1"], [],
          "HPA checkout-web 当前副本 4，maxReplicas 为 20，CPU 利用率 180%，目标 70%，却没有扩容；pod "
          "checkout-web-7d4b9c8f6-p2wzk 报 FailedGetResourceMetric。"),
         ("a2", "NEG", ["hp3"], [],
          "知识库没有返回 shop-web 命名空间 ResourceQuota 与 LimitRange 的变更记录。"),
     ],
     "conclusion": ("checkout-web 的 HPA 取不到指标，因此没有按 180% 的利用率扩容；配额是否变更无法确认。", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "查看 HPA Conditions 中的 AbleToScale、ScalingActive 与 ScalingLimited。"),
     ],
     "limits": LIM},

    {"id": "hp-02", "label": "G", "cat": "units", "uns": [],
     "why": "15s written as 15 秒 and 60s (--metric-resolution=60s) as 60 秒: same values, same unit; 0.1 and ±10% are stated.",
     "analysis": [
         ("a1", "N", ["hp1"], [C1],
          "kube-controller-manager 每 15 秒评估一次 HPA（--horizontal-pod-autoscaler-sync-period 默认 15 秒），"
          "--horizontal-pod-autoscaler-tolerance 默认 0.1，即利用率在目标值 ±10% 以内不调整；metrics-server 的抓取周期为 60 秒。"),
     ],
     "conclusion": ("180% 的利用率远超容忍范围，HPA 不扩容不是评估周期或容忍度造成的。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "确认 metrics-server 在最近 60 秒内是否返回了 checkout-web 的指标。"),
     ],
     "limits": LIM},

    {"id": "hp-03", "label": "G", "cat": "slash-list", "uns": [],
     "why": "503/504 is a slash list whose members are both stated in hp2; 6.3% is hp2's query value.",
     "analysis": [
         ("a1", "N", ["hp2"], [],
          "checkout-web 入口的 5xx 比例为 6.3%。ingress-nginx 的 503/504 要分开看：503 表示 Service 没有可用的 Endpoints，504 "
          "表示上游在 proxy-read-timeout 内没有返回响应头；扩容不及时时两者会同时出现。"),
     ],
     "conclusion": ("入口 5xx 与 checkout-web 扩容不及时相符。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "按访问日志中的 $upstream_status 分别统计 503/504。"),
     ],
     "limits": LIM},

    {"id": "hp-04", "label": "G", "cat": "range", "uns": [],
     "why": "70-80% (ASCII hyphen) where chunk-2 says 70%~80%; 50% and the query's 70% are stated.",
     "analysis": [
         ("a1", "N", ["hp1"], [],
          "CPU 目标利用率建议 70-80%，低于 50% 会造成资源浪费；checkout-web 的目标为 70%，在建议范围内。"),
     ],
     "conclusion": ("checkout-web 的目标利用率设置合理，不扩容的原因在别处。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "保持 70% 的目标，先排查 FailedGetResourceMetric。"),
     ],
     "limits": LIM},

    {"id": "hp-05", "label": "G", "cat": "quote-style", "uns": [],
     "why": "“扩缩容抖动” is a short term of chunk-2 in Chinese quotes used as emphasis; 600 is stated.",
     "analysis": [
         ("a1", "N", ["hp1"], [C2],
          "副本在上下限之间来回摆动称为“扩缩容抖动”，可把 scaleDown 窗口调到 600。"),
     ],
     "conclusion": ("checkout-web 的问题是不扩容，并不是“扩缩容抖动”，暂不需要调整 scaleDown 窗口。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "扩容恢复后再观察是否出现“扩缩容抖动”。"),
     ],
     "limits": LIM},

    {"id": "hp-06", "label": "G", "cat": "placeholder-filled", "uns": [],
     "why": "kubectl top pod <pod> -n <namespace> in a code span, filled with the alert's pod and namespace from hp1's query.",
     "analysis": [
         ("a1", "N", ["hp1"], [],
          "FailedGetResourceMetric 说明 metrics-server 不可用，或 Pod 没有设置 resources.requests.cpu。"),
     ],
     "conclusion": ("checkout-web 的 HPA 拿不到 CPU 指标。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 `kubectl top pod checkout-web-7d4b9c8f6-p2wzk -n shop-web` 验证指标是否可取。"),
         ("p2", ["a1"], "检查 checkout-web 的 Deployment 是否设置了 resources.requests.cpu。"),
     ],
     "limits": LIM},

    {"id": "hp-07", "label": "G", "cat": "key-unit", "uns": [],
     "why": "stabilizationWindowSeconds values 0 and 300 written as 0 秒 and 300 秒: the key name fixes the unit; each value "
            "stays with its own key.",
     "analysis": [
         ("a1", "N", ["hp1"], [C2],
          "autoscaling/v2 的 behavior 中 scaleUp.stabilizationWindowSeconds: 0，即扩容等待 0 秒；"
          "scaleDown.stabilizationWindowSeconds: 300，即缩容前观察 300 秒。"),
     ],
     "conclusion": ("扩容没有稳定窗口，checkout-web 不扩容不是 behavior 配置造成的。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "保持 scaleUp.stabilizationWindowSeconds: 0 不变。"),
     ],
     "limits": LIM},

    {"id": "hp-08", "label": "G", "cat": "version-prefix", "uns": [],
     "why": "Kubernetes 1.27 and 1.23 written as v1.27 and v1.23 (leading v).",
     "analysis": [
         ("a1", "N", ["hp1"], [],
          "集群为 Kubernetes v1.27，autoscaling/v2 自 v1.23 起 GA，可以使用 behavior 字段控制扩缩容速度。"),
     ],
     "conclusion": ("集群版本支持 autoscaling/v2，checkout-web 的 HPA 可以按需配置 behavior。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "确认 checkout-web 的 HPA 使用 autoscaling/v2。"),
     ],
     "limits": LIM},

    {"id": "hp-09", "label": "G", "cat": "fenced-code", "uns": [],
     "why": "A ```bash fence holding chunk-1's kubectl describe hpa command, <hpa> and <namespace> filled from the query.",
     "analysis": [
         ("a1", "N", ["hp1"], [],
          "HPA checkout-web 没有扩容，需要查看 Conditions 中的 AbleToScale、ScalingActive 与 ScalingLimited。"),
     ],
     "conclusion": ("先读 HPA 的 Conditions，判断是取不到指标还是达到了上限。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行：\n\n```bash\nkubectl describe hpa checkout-web -n shop-web\n```\n\n若 ScalingLimited 为 True "
                        "且原因是 TooManyReplicas，说明已达到 maxReplicas。"),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "hp-10", "label": "U", "cat": "near-miss-identifier", "uns": ["proxy_read_timeout"],
     "why": "hp2 names the annotation key proxy-read-timeout; proxy_read_timeout (underscores) is a near miss it does not state.",
     "analysis": [
         ("a1", "N", ["hp2"], [],
          "ingress-nginx 返回 504 表示上游在 proxy_read_timeout（默认 60 秒）内没有返回响应头，返回 503 表示 Service 没有可用的 "
          "Endpoints。"),
     ],
     "conclusion": ("入口 5xx 是 checkout-web 扩容不及时的表现。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "按 $upstream_status 统计 503 与 504 的比例。"),
     ],
     "limits": LIM},

    {"id": "hp-11", "label": "U", "cat": "neighbour-value", "uns": ["300"],
     "why": "300 is scaleDown.stabilizationWindowSeconds' value; chunk-2 gives scaleUp.stabilizationWindowSeconds: 0. The value "
            "is taken from the neighbouring key.",
     "analysis": [
         ("a1", "N", ["hp1"], [],
          "autoscaling/v2 的 behavior 中 scaleUp.stabilizationWindowSeconds 为 300，扩容前要等待稳定窗口结束。"),
     ],
     "conclusion": ("checkout-web 扩容慢，部分原因在扩容稳定窗口。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "检查 checkout-web 的 HPA 的 behavior 字段。"),
     ],
     "limits": LIM},

    {"id": "hp-12", "label": "U", "cat": "disguise", "uns": ["\u0663\u0660s"],
     "why": "Arabic-Indic digits display 30s; chunk-1 gives the sync period as 15s.",
     "analysis": [
         ("a1", "N", ["hp1"], [],
          "kube-controller-manager 的 --horizontal-pod-autoscaler-sync-period 默认 \u0663\u0660s，"
          "--horizontal-pod-autoscaler-tolerance 默认 0.1。"),
     ],
     "conclusion": ("评估周期不是 checkout-web 不扩容的原因。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "先排查 FailedGetResourceMetric。"),
     ],
     "limits": LIM},

    {"id": "hp-13", "label": "U", "cat": "markdown-split", "uns": ["**4**5 秒"],
     "why": "Bold splits the number: **4**5 秒 displays 45 秒, which hp2 does not state (it gives 40~90 秒).",
     "analysis": [
         ("a1", "N", ["hp2"], [],
          "新 Pod 从创建到就绪约需 **4**5 秒，readinessProbe 为 initialDelaySeconds: 20、periodSeconds: 5。"),
     ],
     "conclusion": ("扩容后的新 Pod 不能立即接流量，入口会短暂出现 503。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "检查 checkout-web 的 readinessProbe 配置。"),
     ],
     "limits": LIM},

    {"id": "hp-14", "label": "U", "cat": "number-words", "uns": ["十五分钟"],
     "why": "十五分钟 (15 minutes) is not stated; hp1 gives 15s and 每 15 秒 only.",
     "analysis": [
         ("a1", "N", ["hp1"], [],
          "kube-controller-manager 每十五分钟评估一次 HPA；pod checkout-web-7d4b9c8f6-p2wzk 报 FailedGetResourceMetric。"),
     ],
     "conclusion": ("checkout-web 的 HPA 取不到指标。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "检查 metrics-server 是否可用。"),
     ],
     "limits": LIM},

    {"id": "hp-15", "label": "U", "cat": "range", "uns": ["30~90 秒"],
     "why": "hp2 gives 40~90 秒; the range 30~90 秒 has an unstated end (30).",
     "analysis": [
         ("a1", "N", ["hp2"], [],
          "新 Pod 从创建到就绪通常需要 30~90 秒，扩容不及时时 503 与 504 会同时出现。"),
     ],
     "conclusion": ("入口 5xx 与 checkout-web 扩容慢一致。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "按 $upstream_status 区分 503 与 504。"),
     ],
     "limits": LIM},

    {"id": "hp-16", "label": "U", "cat": "conversion", "uns": ["5 分钟"],
     "why": "chunk-2 gives scaleDown.stabilizationWindowSeconds: 300; 5 分钟 is a conversion it does not state.",
     "analysis": [
         ("a1", "N", ["hp1"], [],
          "scaleDown.stabilizationWindowSeconds: 300，即缩容前观察 5 分钟；scaleUp.stabilizationWindowSeconds: 0。"),
     ],
     "conclusion": ("behavior 配置不会阻止 checkout-web 扩容。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "排查 FailedGetResourceMetric。"),
     ],
     "limits": LIM},

    {"id": "hp-17", "label": "U", "cat": "other-citation", "uns": ["1.27"],
     "why": "a1 narrows hp1 to k8s-hpa#chunk-1; Kubernetes 1.27 is stated only in chunk-2, which a1 does not cite.",
     "analysis": [
         ("a1", "N", ["hp1"], [C1],
          "集群为 Kubernetes 1.27；FailedGetResourceMetric 说明 metrics-server 不可用或 Pod 没有设置 resources.requests.cpu。"),
     ],
     "conclusion": ("checkout-web 的 HPA 拿不到指标。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 kubectl top pod checkout-web-7d4b9c8f6-p2wzk -n shop-web。"),
     ],
     "limits": LIM},
]
