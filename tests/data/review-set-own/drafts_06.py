"""Drafts for set `ct` (Linux conntrack table full, Chinese). See build.py for the format."""
SET = "ct"
C1, C2 = "kb-conntrack#chunk-1", "kb-conntrack#chunk-2"
LIM = ["仅基于知识库检索结果与告警信息，未登录 node-edge-07 查看实时 conntrack 统计。"]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "ct-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Plain restatement: the kernel message, 524288 and the alert from ct1's query; net.netfilter.nf_conntrack_max = "
            "524288 and the commands from chunk-1.",
     "analysis": [
         ("a1", "N", ["ct1"], [],
          "node-edge-07 的 dmesg 出现 nf_conntrack: table full, dropping packet，nf_conntrack_count 为 524288，等于当前的 "
          "net.netfilter.nf_conntrack_max = 524288，触发 NodeConntrackTableFull。"),
     ],
     "conclusion": ("node-edge-07 的 conntrack 表已满，新连接的首包被直接丢弃。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "用 conntrack -S 查看 drop 与 insert_failed 计数。"),
     ],
     "limits": LIM},

    {"id": "ct-02", "label": "G", "cat": "digit-grouping", "uns": [],
     "why": "524288 written as 524,288 and 1048576 as 1 048 576 (digit grouping); 320 字节 and 320MiB are stated; the sysctl "
            "command keeps the evidence's form.",
     "analysis": [
         ("a1", "N", ["ct1"], [],
          "当前 nf_conntrack_max 为 524,288，已被占满。临时可调到 1 048 576：每个条目约占 320 字节，1 048 576 个条目约 320MiB "
          "内存。"),
     ],
     "conclusion": ("node-edge-07 需要提高 conntrack 上限。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 sysctl -w net.netfilter.nf_conntrack_max=1048576。"),
     ],
     "limits": LIM},

    {"id": "ct-03", "label": "G", "cat": "slash-list", "uns": [],
     "why": "IPv4/IPv6 where chunk-2 states IPv4 与 IPv6; the paths and keys are stated.",
     "analysis": [
         ("a1", "N", ["ct1"], [C2],
          "IPv4/IPv6 的连接共用同一张表，提高 net.netfilter.nf_conntrack_max 时要把 IPv6 连接一起算进去；持久化写入 "
          "/etc/sysctl.d/90-conntrack.conf。"),
     ],
     "conclusion": ("上限要按节点的全部连接估算。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "把新的上限写入 /etc/sysctl.d/90-conntrack.conf。"),
     ],
     "limits": LIM},

    {"id": "ct-04", "label": "G", "cat": "range", "uns": [],
     "why": "70–80% (en dash) where chunk-1 says 70%~80%; 90% and 524288 are stated.",
     "analysis": [
         ("a1", "N", ["ct1"], [],
          "conntrack 使用率达到 70–80% 时应预警，超过 90% 需要扩容；node-edge-07 的 nf_conntrack_count 已达到 524288，"
          "表已满。"),
     ],
     "conclusion": ("预警阈值没有起作用，node-edge-07 直接到了表满。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "为 conntrack 使用率增加 70–80% 的预警。"),
     ],
     "limits": LIM},

    {"id": "ct-05", "label": "G", "cat": "number-words", "uns": [],
     "why": "一百二十秒 = 120 秒, 六十秒 = 60 秒, 五天 = 5 天: number words for stated values, each with its own key.",
     "analysis": [
         ("a1", "N", ["ct1"], [C1],
          "TIME_WAIT 条目保留过久是表满的常见原因：nf_conntrack_tcp_timeout_time_wait 默认一百二十秒，"
          "nf_conntrack_tcp_timeout_close_wait 默认六十秒，nf_conntrack_tcp_timeout_established 默认五天。"),
     ],
     "conclusion": ("短连接多时，TIME_WAIT 条目会长时间占用 conntrack 表。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "统计 node-edge-07 上 TIME_WAIT 条目的占比。"),
     ],
     "limits": LIM},

    {"id": "ct-06", "label": "G", "cat": "own-ids", "uns": [],
     "why": "The texts name the draft's own run_id (run-conntrack-4471) and item ids (a1, a2, p1, p2); the rest is stated.",
     "analysis": [
         ("a1", "N", ["ct1"], [],
          "本次诊断 run-conntrack-4471：node-edge-07 的 nf_conntrack_count 为 524288，已达到 net.netfilter.nf_conntrack_max。"),
         ("a2", "N", ["ct2"], [],
          "node-edge-07 的 kube-proxy 1.27.8 运行在 iptables 模式，ConfigMap 为 kube-system/kube-proxy。"),
     ],
     "conclusion": ("综合 a1 与 a2：表已满，且 kube-proxy 会管理上限。", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "p1（依据 a1）：执行 sysctl -w net.netfilter.nf_conntrack_max=1048576。"),
         ("p2", ["a2"], "p2（依据 a2）：同步修改 kube-system/kube-proxy 中的配置。"),
     ],
     "limits": LIM},

    {"id": "ct-07", "label": "G", "cat": "fenced-code", "uns": [],
     "why": "A ```bash fence holding chunk-2's two commands exactly; --conntrack-max-per-core and 32768 are stated.",
     "analysis": [
         ("a1", "N", ["ct1"], [C2],
          "kube-proxy 在 iptables 模式下按 --conntrack-max-per-core（默认 32768）与 --conntrack-min 自动设置上限，启动时会覆盖"
          "手工设置的值。"),
     ],
     "conclusion": ("手工调整必须同时修改 kube-proxy 的 ConfigMap，否则重启后失效。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "临时调整：\n\n```bash\nsysctl -w net.netfilter.nf_conntrack_max=1048576\necho 262144 > "
                        "/sys/module/nf_conntrack/parameters/hashsize\n```"),
     ],
     "limits": LIM},

    {"id": "ct-08", "label": "G", "cat": "version-prefix", "uns": [],
     "why": "kube-proxy 1.27.8 written as v1.27.8 (leading v); the kernel version, 32768 and the ConfigMap are stated.",
     "analysis": [
         ("a1", "N", ["ct2"], [],
          "node-edge-07 的内核为 5.15.0-91-generic（Ubuntu 22.04），kube-proxy v1.27.8 运行在 iptables 模式，"
          "ConfigMap kube-system/kube-proxy 中 conntrack.maxPerCore: 32768。"),
     ],
     "conclusion": ("conntrack 上限由 kube-proxy v1.27.8 的 conntrack.maxPerCore 决定。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "在 kube-system/kube-proxy 中调整 conntrack.maxPerCore。"),
     ],
     "limits": LIM},

    {"id": "ct-09", "label": "G", "cat": "quote-style", "uns": [],
     "why": "《conntrack 表满排查》 is the stated title word for word; “nf_conntrack: table full, dropping packet” is quoted "
            "word for word.",
     "analysis": [
         ("a1", "N", ["ct1"], [],
          "按《conntrack 表满排查》，内核日志出现 “nf_conntrack: table full, dropping packet” 时，新连接的首包会被直接丢弃，"
          "客户端表现为连接超时。"),
     ],
     "conclusion": ("node-edge-07 上的连接超时来自 conntrack 表满。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "用 cat /proc/sys/net/netfilter/nf_conntrack_count 与 nf_conntrack_max 比较。"),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "ct-10", "label": "U", "cat": "derived", "uns": ["翻倍"],
     "why": "翻倍 (a multiplier: 1048576 = 2 × 524288) is derived; the evidence states only the two values.",
     "analysis": [
         ("a1", "N", ["ct1"], [],
          "当前 net.netfilter.nf_conntrack_max = 524288，建议先翻倍到 1048576，每个条目约占 320 字节。"),
     ],
     "conclusion": ("node-edge-07 的 conntrack 上限需要提高。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 sysctl -w net.netfilter.nf_conntrack_max=1048576。"),
     ],
     "limits": LIM},

    {"id": "ct-11", "label": "U", "cat": "disguise", "uns": ["\uff16\uff15\uff15\uff13\uff16"],
     "why": "Fullwidth digits display 65536; chunk-2 gives hashsize 262144.",
     "analysis": [
         ("a1", "N", ["ct1"], [],
          "提高 net.netfilter.nf_conntrack_max 的同时调整哈希桶，把 /sys/module/nf_conntrack/parameters/hashsize 设为 "
          "\uff16\uff15\uff15\uff13\uff16。"),
     ],
     "conclusion": ("上限与哈希桶需要一起调整。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 sysctl -w net.netfilter.nf_conntrack_max=1048576。"),
     ],
     "limits": LIM},

    {"id": "ct-12", "label": "U", "cat": "near-miss-identifier", "uns": ["--conntrack-max"],
     "why": "--conntrack-max is a piece cut from the stated flag --conntrack-max-per-core.",
     "analysis": [
         ("a1", "N", ["ct1"], [],
          "kube-proxy 在 iptables 模式下按 --conntrack-max 与 --conntrack-min（默认 131072）自动设置上限，启动时会覆盖手工值。"),
     ],
     "conclusion": ("手工调整会被 kube-proxy 覆盖。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "同时修改 kube-proxy 的 ConfigMap。"),
     ],
     "limits": LIM},

    {"id": "ct-13", "label": "U", "cat": "other-citation", "uns": ["32 核"],
     "why": "a1 cites ct1 only; 32 核 is stated in ct2, which a1 does not cite.",
     "analysis": [
         ("a1", "N", ["ct1"], [],
          "kube-proxy 按 --conntrack-max-per-core（默认 32768）设置上限，node-edge-07 为 32 核。"),
     ],
     "conclusion": ("node-edge-07 的上限由 kube-proxy 按核数计算。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "修改 kube-proxy 的 ConfigMap 中的上限。"),
     ],
     "limits": LIM},

    {"id": "ct-14", "label": "U", "cat": "negation", "uns": ["86400"],
     "why": "'不要低于 86400' still states 86400, which ct1 does not give (it gives 432000 秒).",
     "analysis": [
         ("a1", "N", ["ct1"], [],
          "nf_conntrack_tcp_timeout_established 默认 432000 秒（5 天），已建立的连接会长期占用条目。"),
     ],
     "conclusion": ("长连接条目占用了 node-edge-07 的 conntrack 表。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "可以调低 nf_conntrack_tcp_timeout_established，但不要低于 86400。"),
     ],
     "limits": LIM},

    {"id": "ct-15", "label": "U", "cat": "number-words", "uns": ["三十秒"],
     "why": "三十秒 (30 秒) is not stated; chunk-1 gives close_wait 60 秒 and time_wait 120 秒.",
     "analysis": [
         ("a1", "N", ["ct1"], [],
          "nf_conntrack_tcp_timeout_close_wait 默认三十秒，nf_conntrack_tcp_timeout_time_wait 默认 120 秒。"),
     ],
     "conclusion": ("TIME_WAIT 条目占用时间更长。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "统计 TIME_WAIT 条目的数量。"),
     ],
     "limits": LIM},

    {"id": "ct-16", "label": "U", "cat": "slash-list", "uns": ["120/90 秒"],
     "why": "A slash list with an unstated member: chunk-1 gives 120 秒 and 60 秒; 90 秒 is not stated.",
     "analysis": [
         ("a1", "N", ["ct1"], [],
          "nf_conntrack_tcp_timeout_time_wait 与 nf_conntrack_tcp_timeout_close_wait 默认分别为 120/90 秒。"),
     ],
     "conclusion": ("短连接的条目会在表中停留较久。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "用 conntrack -S 查看 drop 计数。"),
     ],
     "limits": LIM},
]
