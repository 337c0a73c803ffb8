"""Drafts for set `prw` (Prometheus remote-write drops, Chinese). See build.py for the format."""
SET = "prw"
C1, C2 = "obs-prom-rw#chunk-1", "obs-prom-rw#chunk-2"
LIM = ["仅基于知识库检索结果与告警信息，未查看 prometheus-k8s-0 的实时 remote write 指标。"]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "pr-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Plain restatement of chunk-1's queue_config values and metric names, each with its own key.",
     "analysis": [
         ("a1", "N", ["pr1"], [],
          "queue_config 参考值为 capacity: 10000、max_shards: 200、min_shards: 1、max_samples_per_send: 2000、"
          "batch_send_deadline: 5s、remote_timeout: 30s。分片数长期停在 max_shards 说明远端吞吐不够。"),
     ],
     "conclusion": ("prometheus-k8s-0 的分片数已到 max_shards，瓶颈在远端 thanos-receive.monitoring:19291。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "对比 prometheus_remote_storage_highest_timestamp_in_seconds 与 "
                        "prometheus_remote_storage_queue_highest_sent_timestamp_seconds 之差。"),
     ],
     "limits": LIM},

    {"id": "pr-02", "label": "G", "cat": "query-fact", "uns": [],
     "why": "12000 per minute, prometheus-k8s-0 and thanos-receive.monitoring:19291 are stated only in pr1's query; the "
            "metric's meaning is from chunk-1.",
     "analysis": [
         ("a1", "N", ["pr1"], [],
          "prometheus-k8s-0 的 prometheus_remote_storage_samples_dropped_total 每分钟 12000，远端为 "
          "thanos-receive.monitoring:19291；这个指标的丢弃多因 relabel 或样本过旧。"),
     ],
     "conclusion": ("每分钟 12000 的丢弃需要先分清是 relabel 还是样本过旧。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "同时查看 prometheus_remote_storage_samples_failed_total，判断是否有远端拒绝。"),
     ],
     "limits": LIM},

    {"id": "pr-03", "label": "G", "cat": "quote-style", "uns": [],
     "why": "“分片积压” is a short term of chunk-1 in Chinese quotes used as emphasis; 120 秒 and the metric names are stated.",
     "analysis": [
         ("a1", "N", ["pr1"], [C1],
          "prometheus_remote_storage_highest_timestamp_in_seconds 与 prometheus_remote_storage_queue_highest_sent_timestamp_seconds "
          "之差超过 120 秒即为“分片积压”。"),
     ],
     "conclusion": ("判断 prometheus-k8s-0 是否处于“分片积压”，要看上述时间戳之差。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "在面板上画出上述时间戳之差，确认是否长期超过 120 秒。"),
     ],
     "limits": LIM},

    {"id": "pr-04", "label": "G", "cat": "quote-style", "uns": [],
     "why": "《Remote write 丢样本排查》 is the stated title word for word; 「Skipping resharding, last successful send was "
            "beyond threshold」 is the stated log line in corner brackets.",
     "analysis": [
         ("a1", "N", ["pr1"], [],
          "按《Remote write 丢样本排查》，远端不可用超过约 2 小时后，未发送的样本会随 WAL 段删除而丢失，日志出现「Skipping "
          "resharding, last successful send was beyond threshold」。"),
     ],
     "conclusion": ("若日志中出现该行，说明部分样本已经永久丢失。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "在 prometheus-k8s-0 的日志中搜索「Skipping resharding」。"),
     ],
     "limits": LIM},

    {"id": "pr-05", "label": "G", "cat": "digit-grouping", "uns": [],
     "why": "10000 written as 10 000 and 2000 as 2,000 (digit grouping), each with its own key; 200 is stated.",
     "analysis": [
         ("a1", "N", ["pr1"], [],
          "queue_config 参考值：capacity 为 10 000，max_samples_per_send 为 2,000，max_shards 为 200。"),
     ],
     "conclusion": ("队列参数是参考值，丢样本的原因在远端吞吐。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "不要单纯调大 max_shards，先确认远端的处理能力。"),
     ],
     "limits": LIM},

    {"id": "pr-06", "label": "G", "cat": "version-prefix", "uns": [],
     "why": "v2.45 and v0.32.5 written without the leading v (2.45, 0.32.5); the keys and 3 个副本 are stated.",
     "analysis": [
         ("a1", "N", ["pr1"], [C2],
          "Prometheus 2.45 起 metadata 默认随 remote write 发送，send_exemplars 与 send_native_histograms 需显式开启。"),
         ("a2", "N", ["pr2"], [],
          "thanos-receive 为 StatefulSet，3 个副本，Thanos 0.32.5，--receive.replication-factor=3。"),
     ],
     "conclusion": ("远端 thanos-receive 只有 3 个副本，复制因子为 3。", ["a2"]),
     "actions": [
         ("p1", ["a2"], "评估扩容 thanos-receive 的副本数。"),
     ],
     "limits": LIM},

    {"id": "pr-07", "label": "G", "cat": "units", "uns": [],
     "why": "120 秒, 约 2 小时 and 10 秒 written as 120s, 约 2h and 10s: same values, same units.",
     "analysis": [
         ("a1", "N", ["pr1"], [],
          "remote write 的时间戳之差超过 120s 即为分片积压；远端不可用超过约 2h 后，未发送的样本会随 WAL 段删除而丢失；重分片每 10s "
          "评估一次。"),
     ],
     "conclusion": ("积压持续接近 2h 时，prometheus-k8s-0 会开始永久丢样本。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "积压超过 120s 时立即排查远端。"),
     ],
     "limits": LIM},

    {"id": "pr-08", "label": "G", "cat": "common-term", "uns": [],
     "why": "HTTP and CPU are common vocabulary used as names (not in pr1); 4xx, 5xx, 400, 429, 30ms and 5s are stated.",
     "analysis": [
         ("a1", "N", ["pr1"], [],
          "远端返回不可重试的 4xx（如 400 out of order sample）时，样本计入 prometheus_remote_storage_samples_failed_total；"
          "返回 HTTP 429 或 5xx 时按 min_backoff: 30ms 到 max_backoff: 5s 指数退避重试。"),
     ],
     "conclusion": ("要按远端返回的 HTTP 状态码区分丢弃与重试；单纯调大分片只会增加远端的 CPU 压力。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "统计 thanos-receive.monitoring:19291 返回的 4xx 与 5xx。"),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "pr-09", "label": "U", "cat": "unit-mismatch", "uns": ["30 分钟"],
     "why": "chunk-1 gives remote_timeout: 30s; 30 分钟 is another unit, not stated.",
     "analysis": [
         ("a1", "N", ["pr1"], [],
          "queue_config 中 remote_timeout 为 30 分钟，batch_send_deadline: 5s。"),
     ],
     "conclusion": ("远端超时设置不是丢样本的原因。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "查看 prometheus_remote_storage_samples_failed_total。"),
     ],
     "limits": LIM},

    {"id": "pr-10", "label": "U", "cat": "neighbour-value", "uns": ["10000"],
     "why": "10000 is capacity's value; chunk-1 gives max_samples_per_send: 2000. The value is taken from the neighbouring key.",
     "analysis": [
         ("a1", "N", ["pr1"], [],
          "queue_config 参考值中 max_samples_per_send 为 10000，max_shards: 200。"),
     ],
     "conclusion": ("单批发送量已经很大，瓶颈在远端。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "确认远端的写入能力。"),
     ],
     "limits": LIM},

    {"id": "pr-11", "label": "U", "cat": "conversion", "uns": ["120 分钟"],
     "why": "chunk-2 gives 约 2 小时; 120 分钟 is a conversion it does not state (120 is stated only as 120 秒).",
     "analysis": [
         ("a1", "N", ["pr1"], [],
          "远端不可用超过约 120 分钟（WAL 截断周期）后，未发送的样本会随 WAL 段删除而丢失。"),
     ],
     "conclusion": ("远端长时间不可用会导致样本永久丢失。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "在日志中搜索 Skipping resharding。"),
     ],
     "limits": LIM},

    {"id": "pr-12", "label": "U", "cat": "derived", "uns": ["400000"],
     "why": "400000 (200 shards × 2000 samples) is derived; the evidence does not state it.",
     "analysis": [
         ("a1", "N", ["pr1"], [],
          "max_shards: 200，max_samples_per_send: 2000，即一轮最多可发送 400000 个样本。"),
     ],
     "conclusion": ("发送能力已到上限。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "确认远端吞吐。"),
     ],
     "limits": LIM},

    {"id": "pr-13", "label": "U", "cat": "disguise", "uns": ["\u0969\u0966\u0966 秒"],
     "why": "Devanagari digits display 300 秒; chunk-1 gives 120 秒.",
     "analysis": [
         ("a1", "N", ["pr1"], [],
          "时间戳之差超过 \u0969\u0966\u0966 秒即为分片积压。"),
     ],
     "conclusion": ("需要确认 prometheus-k8s-0 是否处于分片积压。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "查看 prometheus_remote_storage_queue_highest_sent_timestamp_seconds。"),
     ],
     "limits": LIM},

    {"id": "pr-14", "label": "U", "cat": "markdown-split", "uns": ["`6`0 秒"],
     "why": "A code span splits the number: `6`0 秒 displays 60 秒, which pr1 does not state.",
     "analysis": [
         ("a1", "N", ["pr1"], [],
          "时间戳之差超过 120 秒即为分片积压；prometheus-k8s-0 的分片数已达到 max_shards 200。"),
     ],
     "conclusion": ("prometheus-k8s-0 的远端吞吐不足。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "积压持续超过 `6`0 秒时先排查远端 thanos-receive.monitoring:19291。"),
     ],
     "limits": LIM},

    {"id": "pr-15", "label": "U", "cat": "other-citation", "uns": ["10 秒"],
     "why": "a1 narrows pr1 to obs-prom-rw#chunk-1; 每 10 秒 is stated only in chunk-2, which a1 does not cite.",
     "analysis": [
         ("a1", "N", ["pr1"], [C1],
          "分片数长期停在 max_shards 说明远端吞吐不够；重分片每 10 秒评估一次。"),
     ],
     "conclusion": ("prometheus-k8s-0 已无法再增加分片。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "不要单纯调大 max_shards。"),
     ],
     "limits": LIM},

    {"id": "pr-16", "label": "U", "cat": "disguise", "uns": ["max_sampl\u0435_per_send"],
     "why": "A Cyrillic е inside the key: it displays max_sample_per_send, a near miss the evidence does not state (it gives "
            "max_samples_per_send).",
     "analysis": [
         ("a1", "N", ["pr1"], [],
          "queue_config 参考值：capacity: 10000，max_sampl\u0435_per_send: 2000，max_shards: 200。"),
     ],
     "conclusion": ("队列参数不是丢样本的原因。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "确认远端吞吐。"),
     ],
     "limits": LIM},
]
