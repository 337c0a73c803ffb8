"""Drafts for set `zk` (ZooKeeper session expiry, Chinese). See build.py for the format."""
SET = "zk"
C1, C2 = "mw-zk-session#chunk-1", "mw-zk-session#chunk-2"
LIM = ["仅基于知识库检索结果与告警信息，未查看 order-sync 的 GC 日志与 zk-prod 的实时指标。"]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "zk-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Plain restatement: 23 次, SessionExpiredException and the connection string from zk1's query; the session "
            "behaviour and mntr metrics from chunk-1.",
     "analysis": [
         ("a1", "N", ["zk1"], [],
          "order-sync 与 ZooKeeper 的会话过期 23 次，报 SessionExpiredException，连接串为 "
          "zk-1.infra:2181,zk-2.infra:2181,zk-3.infra:2181。会话过期后临时节点随之删除，客户端必须新建会话并重新注册。"),
     ],
     "conclusion": ("order-sync 反复丢失会话，其临时节点会被删除。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "查看 zk_avg_latency、zk_outstanding_requests 与 zk_num_alive_connections。"),
     ],
     "limits": LIM},

    {"id": "zk-02", "label": "G", "cat": "number-words", "uns": [],
     "why": "二十三次 = the query's 23 次 (a count stated in the query); the GC cause is restated from chunk-1.",
     "analysis": [
         ("a1", "N", ["zk1"], [],
          "order-sync 的会话已过期二十三次；最常见的原因是客户端长时间停顿（Full GC 超过会话超时）或网络分区。"),
     ],
     "conclusion": ("二十三次会话过期更像是 order-sync 自身停顿，而不是偶发网络抖动。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "对照 order-sync 的 Full GC 时间点与二十三次会话过期的时间。"),
     ],
     "limits": LIM},

    {"id": "zk-03", "label": "G", "cat": "key-unit", "uns": [],
     "why": "sessionTimeoutMs=60000 and connectionTimeoutMs=15000 written as 60000 毫秒 and 15000 毫秒: the key names fix "
            "the unit; 40000 is stated.",
     "analysis": [
         ("a1", "N", ["zk1"], [C1],
          "Curator 客户端默认 sessionTimeoutMs=60000，即请求 60000 毫秒的会话超时，服务端会把它裁剪到 40000；"
          "connectionTimeoutMs=15000，即连接超时 15000 毫秒。"),
     ],
     "conclusion": ("order-sync 实际得到的会话超时由服务端的 maxSessionTimeout 决定。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "确认 order-sync 的 Full GC 停顿是否超过 40000。"),
     ],
     "limits": LIM},

    {"id": "zk-04", "label": "G", "cat": "slash-list", "uns": [],
     "why": "TLS 1.2/1.3 where chunk-2 states TLS 1.2 与 TLS 1.3; the key and port are stated.",
     "analysis": [
         ("a1", "N", ["zk1"], [C2],
          "客户端与集群之间可启用 TLS 1.2/1.3（ssl.enabledProtocols=TLSv1.2,TLSv1.3），端口 secureClientPort=2281。"),
     ],
     "conclusion": ("加密连接与会话过期无关，不是本次排查的重点。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "会话问题解决后，再评估是否切换到 secureClientPort=2281。"),
     ],
     "limits": LIM},

    {"id": "zk-05", "label": "G", "cat": "version-prefix", "uns": [],
     "why": "JDK17 where zk2 says JDK 17; ZooKeeper 3.8.3 written as v3.8.3; Curator 5.5.0, 8 核 16GiB, 45 秒 are stated.",
     "analysis": [
         ("a1", "N", ["zk2"], [],
          "zk-prod 为 ZooKeeper v3.8.3，运行在 JDK17 上，每节点 8 核 16GiB；order-sync 使用 Curator 5.5.0，"
          "2025 年 3 月起 Full GC 停顿 p99 达到 45 秒。"),
     ],
     "conclusion": ("order-sync 的 Full GC 停顿足以让会话过期。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "优先治理 order-sync 的 Full GC 停顿。"),
     ],
     "limits": LIM},

    {"id": "zk-06", "label": "G", "cat": "quote-style", "uns": [],
     "why": "The fsync log line is quoted word for word without the full stop the evidence has at its end; 1000ms is stated.",
     "analysis": [
         ("a1", "N", ["zk1"], [],
          "事务日志 fsync 超过 1000ms 时日志会出现 “fsync-ing the write ahead log in SyncThread:1 took 1342ms which will "
          "adversely effect operation latency”，此时服务端响应变慢。"),
     ],
     "conclusion": ("服务端磁盘慢也可能让 order-sync 的会话过期。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "确认 dataLogDir 是否放在独立磁盘上。"),
     ],
     "limits": LIM},

    {"id": "zk-07", "label": "G", "cat": "placeholder-filled", "uns": [],
     "why": "echo mntr | nc <host> 2181 in a code span with <host> filled by zk-1.infra from the query's connection string.",
     "analysis": [
         ("a1", "N", ["zk1"], [],
          "需要确认服务端是否健康：mntr 输出中的 zk_avg_latency 与 zk_outstanding_requests 能反映服务端延迟与积压。"),
     ],
     "conclusion": ("先排除服务端问题，再看 order-sync 的停顿。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 `echo mntr | nc zk-1.infra 2181`，zk-2.infra 与 zk-3.infra 同理。"),
     ],
     "limits": LIM},

    {"id": "zk-08", "label": "G", "cat": "quote-style", "uns": [],
     "why": "‘KeeperErrorCode = Session expired for /order-sync/leader’ is a word-for-word piece of the stated log line.",
     "analysis": [
         ("a1", "N", ["zk1"], [],
          "order-sync 日志中的 ‘KeeperErrorCode = Session expired for /order-sync/leader’ 表示服务端已判定会话过期，临时节点"
          "随之删除。"),
     ],
     "conclusion": ("order-sync 丢失会话后需要重新注册 /order-sync/leader。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "确认 order-sync 在会话过期后会新建会话并重新注册。"),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "zk-09", "label": "U", "cat": "conversion", "uns": ["1 分钟"],
     "why": "chunk-1 gives sessionTimeoutMs=60000; 1 分钟 is a conversion it does not state.",
     "analysis": [
         ("a1", "N", ["zk1"], [],
          "Curator 客户端默认请求 1 分钟的会话超时，服务端会把它裁剪到 40000。"),
     ],
     "conclusion": ("order-sync 的会话超时短于客户端的请求值。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "对照 Full GC 停顿与会话超时。"),
     ],
     "limits": LIM},

    {"id": "zk-10", "label": "U", "cat": "neighbour-value", "uns": ["60000"],
     "why": "60000 is sessionTimeoutMs' value; chunk-1 gives connectionTimeoutMs=15000. The value is taken from the "
            "neighbouring key.",
     "analysis": [
         ("a1", "N", ["zk1"], [],
          "Curator 客户端默认 connectionTimeoutMs=60000，连接建立慢时不会很快失败。"),
     ],
     "conclusion": ("连接超时不是 order-sync 会话过期的原因。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "检查 order-sync 的 Full GC 停顿。"),
     ],
     "limits": LIM},

    {"id": "zk-11", "label": "U", "cat": "near-miss-identifier", "uns": ["maxClientCnxn"],
     "why": "maxClientCnxn is a near miss of the stated key maxClientCnxns (final s dropped).",
     "analysis": [
         ("a1", "N", ["zk1"], [],
          "zoo.cfg 推荐 tickTime=2000、initLimit=10、syncLimit=5，maxClientCnxn 为 60。"),
     ],
     "conclusion": ("服务端参数是推荐值，不是会话过期的原因。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "查看 zk_num_alive_connections。"),
     ],
     "limits": LIM},

    {"id": "zk-12", "label": "U", "cat": "invented-quote", "uns": ["KeeperErrorCode = ConnectionLoss for /order-sync/leader"],
     "why": "The quotation changes the evidence's words ('Session expired' becomes 'ConnectionLoss').",
     "analysis": [
         ("a1", "N", ["zk1"], [],
          "order-sync 日志中出现 “KeeperErrorCode = ConnectionLoss for /order-sync/leader”，表示服务端已判定会话过期。"),
     ],
     "conclusion": ("order-sync 丢失了会话。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "确认 order-sync 会新建会话并重新注册。"),
     ],
     "limits": LIM},

    {"id": "zk-13", "label": "U", "cat": "wrong-version", "uns": ["3.8.4"],
     "why": "zk2 gives ZooKeeper 3.8.3; 3.8.4 is a version the evidence does not state.",
     "analysis": [
         ("a1", "N", ["zk2"], [],
          "zk-prod 为 ZooKeeper 3.8.3，运行在 JDK 17 上；order-sync 使用 Curator 5.5.0。"),
     ],
     "conclusion": ("客户端与服务端版本匹配。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "排查结束后把 zk-prod 升级到 ZooKeeper 3.8.4。"),
     ],
     "limits": LIM},

    {"id": "zk-14", "label": "U", "cat": "disguise", "uns": ["3\u20600 秒"],
     "why": "A word joiner (U+2060) inside the number: it displays 30 秒, which zk1 does not state.",
     "analysis": [
         ("a1", "N", ["zk1"], [],
          "最常见的原因是客户端长时间停顿（Full GC 超过会话超时）或网络分区。"),
     ],
     "conclusion": ("order-sync 的 Full GC 停顿可能超过了会话超时。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "把 order-sync 的 Full GC 停顿控制在 3\u20600 秒以内。"),
     ],
     "limits": LIM},

    {"id": "zk-15", "label": "U", "cat": "invented-value", "uns": ["7 天"],
     "why": "The query gives 23 次 with no time window; 7 天 is not stated.",
     "analysis": [
         ("a1", "N", ["zk1"], [],
          "过去 7 天 order-sync 与 ZooKeeper 的会话过期 23 次，报 SessionExpiredException。"),
     ],
     "conclusion": ("order-sync 反复丢失会话。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "查看 zk_avg_latency。"),
     ],
     "limits": LIM},

    {"id": "zk-16", "label": "U", "cat": "unit-mismatch", "uns": ["2000 秒"],
     "why": "tickTime=2000 is in 毫秒 (chunk-1 says so); 2000 秒 is another unit, not stated.",
     "analysis": [
         ("a1", "N", ["zk1"], [],
          "zoo.cfg 中 tickTime 为 2000 秒，GC 停顿需低于 tickTime。"),
     ],
     "conclusion": ("order-sync 的 GC 停顿需要与 tickTime 比较。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "检查 order-sync 的 Full GC 停顿。"),
     ],
     "limits": LIM},

    {"id": "zk-17", "label": "U", "cat": "other-citation", "uns": ["40000"],
     "why": "a1 narrows zk1 to mw-zk-session#chunk-2; 40000 is stated only in chunk-1, which a1 does not cite.",
     "analysis": [
         ("a1", "N", ["zk1"], [C2],
          "zoo.cfg 推荐 tickTime=2000、initLimit=10、syncLimit=5，此时服务端允许的会话超时上限为 40000。"),
     ],
     "conclusion": ("order-sync 的停顿一旦超过上限，会话就会过期。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "检查 order-sync 的 GC 停顿。"),
     ],
     "limits": LIM},
]
