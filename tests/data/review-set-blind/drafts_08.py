"""Drafts for set `ntp` (clock skew on a VM, chrony, Chinese). See build.py for the format."""
SET = "ntp"
N1, N2 = "kb-chrony#chunk-1", "kb-chrony#chunk-2"
LIM = ["仅基于知识库与 CMDB 检索结果和告警信息，未登录 kafka-broker-3 执行 chronyc。"]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "nt-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Host, address, +4.7s, the alert, 0.05s / 0.05, 10m, 3, makestep 1.0 3 are restated from nt1; the vMotion "
            "date and time from nt2; bold labels and line breaks.",
     "analysis": [
         ("a1", "N", ["nt1"], [],
          "**告警**：kafka-broker-3（192.168.12.33）时钟偏移 +4.7s，超过 NodeClockSkewDetected 的阈值 0.05s。\n"
          "**手册**：node_timex_offset_seconds 绝对值超过 0.05 持续 10m 即触发该告警；chronyd 默认只在启动后的前 3 次更新中"
          "允许跳变（makestep 1.0 3），之后只做渐进调整。"),
         ("a2", "N", ["nt2"], [],
          "kafka-broker-3 于 2024-06-10 22:30 因宿主机维护做过 vMotion 迁移。"),
     ],
     "conclusion": ("vMotion 迁移后出现了数秒偏移，而 chronyd 已过了允许跳变的阶段，只能缓慢追回。", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "执行 chronyc makestep 立即校正 kafka-broker-3 的时钟。"),
     ],
     "limits": LIM},

    {"id": "nt-02", "label": "G", "cat": "code-block", "uns": [],
     "why": "The chrony lines in a fenced block with a language tag are the excerpt's own (server ... iburst, makestep 1.0 "
            "3); the path, commands and ^* are stated.",
     "analysis": [
         ("a1", "N", ["nt1"], [N1],
          "chrony 的配置文件为 /etc/chrony.conf，手册给出的时间源与跳变配置如下：\n```conf\nserver ntp1.corp.local iburst\n"
          "server ntp2.corp.local iburst\nmakestep 1.0 3\n```\n其中 makestep 1.0 3 只允许启动后的前 3 次更新跳变。"),
     ],
     "conclusion": ("kafka-broker-3 运行中的 chronyd 不会自动跳变纠正 +4.7s 的偏移。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "```bash\nchronyc tracking\nchronyc sources -v\n```\n确认有状态为 ^* 的可用时间源后，执行 chronyc makestep。"),
     ],
     "limits": LIM},

    {"id": "nt-03", "label": "G", "cat": "number-words", "uns": [],
     "why": "八次 = 8 次, 三次 = 3 次, 五分钟 = 5 分钟, 一百六十八 = 168: Chinese number words for stated values; 377 and +4.7s "
            "are restated (the query counts even with document_ids).",
     "analysis": [
         ("a1", "N", ["nt1"], [N1],
          "Reach 为八进制，377 表示最近八次轮询全部成功；chronyd 默认只在启动后的前三次更新中允许跳变。"),
         ("a2", "N", ["nt1"], [N2],
          "Kerberos 默认容忍五分钟偏差，当前 +4.7s 尚在范围内；Kafka 的 log.retention.hours 默认一百六十八。"),
     ],
     "conclusion": ("偏移还没有影响 Kerberos，但已远超告警阈值，需要尽快校正。", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "用 chronyc sources -v 查看 Reach 是否为 377。"),
     ],
     "limits": LIM},

    {"id": "nt-04", "label": "G", "cat": "fullwidth-digits", "uns": [],
     "why": "＋４．７s, ０．０５s and ３７７ are full-width characters that display the stated +4.7s, 0.05s and 377 (LABELS.md: a "
            "disguised specific displaying a stated value is grounded); 8 次 is stated.",
     "analysis": [
         ("a1", "N", ["nt1"], [],
          "kafka-broker-3 的偏移 ＋４．７s 已远超阈值 ０．０５s；Reach 值为 ３７７ 时表示最近 8 次轮询全部成功，说明时间源本身可达。"),
     ],
     "conclusion": ("时间源可达时，偏移要靠手动跳变才能尽快消除。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 chronyc makestep。"),
     ],
     "limits": LIM},

    {"id": "nt-05", "label": "G", "cat": "units", "uns": [],
     "why": "0.05 → 0.05 秒 (the unit the key node_timex_offset_seconds fixes, and the query's 0.05s), 10m → 10 分钟, 168 → "
            "168 小时 (the unit the key log.retention.hours fixes; LABELS.md fine point).",
     "analysis": [
         ("a1", "N", ["nt1"], [],
          "node_timex_offset_seconds 绝对值超过 0.05 秒持续 10 分钟即触发 NodeClockSkewDetected；Kafka 的 "
          "log.retention.hours 默认 168 小时，按时间戳做日志保留。"),
     ],
     "conclusion": ("kafka-broker-3 的偏移会影响按时间戳的日志保留判断。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "校正时钟后，核对 kafka-broker-3 上日志保留的行为是否恢复正常。"),
     ],
     "limits": LIM},

    {"id": "nt-06", "label": "G", "cat": "quote-style", "uns": [],
     "why": "「x509: certificate has expired or is not yet valid」 is the excerpt's error word for word in corner "
            "brackets; “^*” is its status mark in curly quotes; 5 分钟 is stated.",
     "analysis": [
         ("a1", "N", ["nt1"], [N2],
          "偏移越过证书有效期边界时 TLS 校验会失败，报错「x509: certificate has expired or is not yet valid」；Kerberos 默认"
          "容忍 5 分钟偏差。"),
         ("a2", "N", ["nt1"], [N1],
          "chronyc sources -v 中应有状态为 “^*” 的可用时间源。"),
     ],
     "conclusion": ("若 kafka-broker-3 上出现 TLS 报错，可能来自时钟偏移；先确认时间源是否可用。", ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "执行 chronyc sources -v，确认 “^*” 状态。"),
     ],
     "limits": LIM},

    {"id": "nt-07", "label": "G", "cat": "slash-list", "uns": [],
     "why": "ntp1.corp.local/ntp2.corp.local, 10.0.0.11/10.0.0.12 and etcd/ZooKeeper are slash lists whose members are "
            "each stated; Rocky Linux 8.9 and chrony 4.2 are restated.",
     "analysis": [
         ("a1", "N", ["nt2"], [],
          "NTP 服务器为 ntp1.corp.local/ntp2.corp.local（10.0.0.11/10.0.0.12）；kafka 集群主机为 Rocky Linux 8.9，chrony 4.2。"),
         ("a2", "N", ["nt1"], [N2],
          "etcd/ZooKeeper 对时钟偏移敏感；防火墙需放行 UDP 123 端口。"),
     ],
     "conclusion": ("需要确认 kafka-broker-3 的时间源在偏移期间是否可达。", ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "确认 kafka-broker-3 到时间源的 UDP 123 端口已放行。"),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "nt-08", "label": "U", "cat": "derived", "uns": ["94 倍"],
     "why": "94 (4.7s / 0.05s) is derived; the evidence states only the two values.",
     "analysis": [
         ("a1", "N", ["nt1"], [],
          "kafka-broker-3 的偏移 +4.7s 是告警阈值 0.05s 的 94 倍，chronyd 虽在运行但只做渐进调整。"),
     ],
     "conclusion": ("偏移远超阈值，需要手动校正。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 chronyc makestep。"),
     ],
     "limits": LIM},

    {"id": "nt-09", "label": "U", "cat": "conversion", "uns": ["300 秒"],
     "why": "Kerberos tolerates 5 分钟 in the evidence; '300 秒' is a unit conversion it does not state.",
     "analysis": [
         ("a1", "N", ["nt1"], [],
          "Kerberos 默认容忍 300 秒偏差，kafka-broker-3 当前 +4.7s 的偏移尚未影响认证。"),
     ],
     "conclusion": ("偏移的主要影响在告警与日志保留，而非认证。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 chronyc tracking 查看 System time 与 Last offset。"),
     ],
     "limits": LIM},

    {"id": "nt-10", "label": "U", "cat": "near-miss-identifier", "uns": ["node_timex_offset_second"],
     "why": "node_timex_offset_second drops the final s of the stated metric node_timex_offset_seconds (a near miss).",
     "analysis": [
         ("a1", "N", ["nt1"], [],
          "NodeClockSkewDetected 在 node_timex_offset_second 绝对值超过 0.05 持续 10m 时触发，kafka-broker-3 当前为 +4.7s。"),
     ],
     "conclusion": ("告警是真实的时钟偏移。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 chronyc makestep 后观察告警是否恢复。"),
     ],
     "limits": LIM},

    {"id": "nt-11", "label": "U", "cat": "invented-quote", "uns": ["System clock wrong by 4.7 seconds, adjustment started"],
     "why": "The quoted chronyd log line is not in the evidence.",
     "analysis": [
         ("a1", "N", ["nt1"], [],
          "chronyd 日志中应有 “System clock wrong by 4.7 seconds, adjustment started”，说明它正在渐进调整而不是跳变。"),
     ],
     "conclusion": ("chronyd 在慢慢追回偏移。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 chronyc makestep 立即校正。"),
     ],
     "limits": LIM},

    {"id": "nt-12", "label": "U", "cat": "wrong-version", "uns": ["4.3"],
     "why": "The CMDB gives chrony 4.2; 4.3 is a version the evidence does not state.",
     "analysis": [
         ("a1", "N", ["nt2"], [],
          "kafka-broker-3 为 VMware 虚拟机，操作系统 Rocky Linux 8.9，chrony 4.3，内核 4.18.0-513.el8。"),
     ],
     "conclusion": ("kafka-broker-3 是虚拟机，迁移后容易出现偏移。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "向虚拟化团队确认 2024-06-10 22:30 的 vMotion 迁移记录。"),
     ],
     "limits": LIM},

    {"id": "nt-13", "label": "U", "cat": "rounded", "uns": ["5 秒"],
     "why": "The query says +4.7s; '约 5 秒' is a rounded value. a1's documents (chunk-1) and the query state no 5 with "
            "any unit.",
     "analysis": [
         ("a1", "N", ["nt1"], [N1],
          "kafka-broker-3（192.168.12.33）时钟偏移约 5 秒，远超 NodeClockSkewDetected 的阈值 0.05s。"),
     ],
     "conclusion": ("偏移已达到数秒级，需要手动校正。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 chronyc makestep。"),
     ],
     "limits": LIM},

    {"id": "nt-14", "label": "U", "cat": "disguise", "uns": ["0.\u20605s"],
     "why": "A word joiner (U+2060, invisible) inside the number: it displays 0.5s, which the evidence does not state (the "
            "threshold is 0.05s).",
     "analysis": [
         ("a1", "N", ["nt1"], [],
          "kafka-broker-3 的时钟偏移 +4.7s，NodeClockSkewDetected 已触发。"),
     ],
     "conclusion": ("偏移需要立即校正。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 chronyc makestep，之后确认偏移回到 0.\u20605s 以内。"),
     ],
     "limits": LIM},

    {"id": "nt-15", "label": "U", "cat": "negation", "uns": ["500 ppm"],
     "why": "'不要调到 500 ppm 以下' still states 500 ppm, which the evidence does not give (it gives 83333.333 ppm).",
     "analysis": [
         ("a1", "N", ["nt1"], [],
          "chronyd 启动后只做渐进调整，速度受 maxslewrate 限制（默认 83333.333 ppm）；偏移达到数秒时手动执行 chronyc makestep。"),
     ],
     "conclusion": ("kafka-broker-3 的偏移应手动跳变校正。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "如需调整 maxslewrate，不要调到 500 ppm 以下，以免追回过慢。"),
     ],
     "limits": LIM},
]
