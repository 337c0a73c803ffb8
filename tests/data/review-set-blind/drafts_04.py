"""Drafts for set `jdns` (JVM DNS caching after a database VIP switch, Chinese). See build.py for the format."""
SET = "jdns"
J1, J2 = "kb-java-dns#chunk-1", "kb-java-dns#chunk-2"
LIM = ["仅基于知识库检索结果与告警信息，未在 payment-gateway 容器内实际执行 ss 与 jcmd。"]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "jd-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Service, Java 17, both address:port pairs, the record, TTL 30s, the key with its default and the jcmd command "
            "are restated from jd1 (query and excerpts); the negative item restates its own query (the change number).",
     "analysis": [
         ("a1", "N", ["jd1"], [],
          "payment-gateway（Java 17）在数据库 VIP 切换后仍连到旧地址 10.30.2.15:5432，而 db-primary.pay.internal 已指向新"
          "地址 10.30.2.41:5432（TTL 30s）。JVM 在 InetAddress 层自带 DNS 缓存，未安装安全管理器时 networkaddress.cache.ttl "
          "默认 30 秒。"),
         ("a2", "NEG", ["jd3"], [],
          "知识库中找不到变更单 CHG-20240611-017 的 VIP 切换时间。"),
     ],
     "conclusion": ("DNS 缓存默认 30 秒即过期，payment-gateway 仍连旧地址，更可能是连接池中的长连接没有重建。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 `jcmd <pid> VM.system_properties | grep inetaddr` 确认实际生效的参数。"),
         ("p2", ["a2"], "向变更负责人确认 CHG-20240611-017 的实际切换时间。"),
     ],
     "limits": LIM},

    {"id": "jd-02", "label": "G", "cat": "env-var", "uns": [],
     "why": "${JAVA_HOME} is the stated $JAVA_HOME written in brace syntax, the same variable; the path, keys, defaults "
            "and -1 are stated.",
     "analysis": [
         ("a1", "N", ["jd1"], [],
          "DNS 缓存时间可以在 `${JAVA_HOME}/conf/security/java.security` 中修改：networkaddress.cache.ttl（默认 30 秒）与 "
          "networkaddress.cache.negative.ttl（默认 10 秒）；安装了安全管理器时前者为永久缓存（-1）。"),
     ],
     "conclusion": ("payment-gateway 的 DNS 缓存时长取决于上述安全属性。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "检查 payment-gateway 镜像里 `$JAVA_HOME/conf/security/java.security` 是否把 "
                        "networkaddress.cache.ttl 设成了 -1。"),
     ],
     "limits": LIM},

    {"id": "jd-03", "label": "G", "cat": "units", "uns": [],
     "why": "1800000 毫秒 → 1800000 ms and 30 秒 → 30 s: the same values in the same units; the address is the query's "
            "(the query counts even with document_ids).",
     "analysis": [
         ("a1", "N", ["jd1"], [J2],
          "HikariCP 的 maxLifetime 默认 1800000 ms，应比数据库侧的连接超时至少短 30 s；切换 VIP 后可通过 JMX 调用 "
          "softEvictConnections() 让连接逐个重建。"),
     ],
     "conclusion": ("不做处理的话，payment-gateway 的连接可能要到 maxLifetime（1800000 ms）到期后才会换到 10.30.2.41:5432。",
                    ["a1"]),
     "actions": [
         ("p1", ["a1"], "通过 JMX 调用 softEvictConnections()，让连接池逐个重建到新地址的连接。"),
     ],
     "limits": LIM},

    {"id": "jd-04", "label": "G", "cat": "digit-grouping", "uns": [],
     "why": "1,800,000, 3,600 and 1,800 are the stated 1800000, 3600 and 1800 with digit grouping.",
     "analysis": [
         ("a1", "N", ["jd1"], [],
          "连接池的长连接不受 DNS 缓存影响：HikariCP 的 maxLifetime 默认 1,800,000 毫秒。"),
         ("a2", "N", ["jd2"], [],
          "上游 CoreDNS 的 cache 插件默认最长缓存 3,600 秒、负缓存 1,800 秒。"),
     ],
     "conclusion": ("即使 DNS 已更新，payment-gateway 的旧连接也会保留到 maxLifetime 到期。", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "评估把 maxLifetime 调小，使其比数据库侧的连接超时至少短 30 秒。"),
     ],
     "limits": LIM},

    {"id": "jd-05", "label": "G", "cat": "slash-list", "uns": [],
     "why": "'30/10 秒' is a slash list of the stated 30 秒 and 10 秒; 'networkaddress.cache.ttl / "
            "networkaddress.cache.negative.ttl' lists two stated keys; A/AAAA and nscd/systemd-resolved are the "
            "excerpts' own lists.",
     "analysis": [
         ("a1", "N", ["jd1"], [],
          "JVM 的 DNS 缓存与操作系统的 nscd/systemd-resolved 无关，由安全属性 networkaddress.cache.ttl / "
          "networkaddress.cache.negative.ttl 控制，未安装安全管理器时默认分别为 30/10 秒。"),
         ("a2", "N", ["jd2"], [],
          "少于 5 个点的名字会先依次尝试 search 域，一次解析最多产生 8 次查询（A/AAAA 各 4 次）。"),
     ],
     "conclusion": ("payment-gateway 解析 db-primary.pay.internal 时，JVM 缓存与 search 域都会影响结果。", ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "对 db-primary.pay.internal 使用末尾带点的全限定名 db-primary.pay.internal.，避免逐个尝试 search 域。"),
     ],
     "limits": LIM},

    {"id": "jd-06", "label": "G", "cat": "quote-style", "uns": [],
     "why": "「永久缓存」, “负缓存时间” and “负缓存 1800 秒” are the excerpts' own words, in corner brackets and curly quotes.",
     "analysis": [
         ("a1", "N", ["jd1"], [],
          "安装了安全管理器时 networkaddress.cache.ttl 为「永久缓存」（-1）；未安装时默认 30 秒。"),
         ("a2", "N", ["jd2"], [],
          "NXDOMAIN 同样会被 JVM 按“负缓存时间”缓存；CoreDNS 的 cache 插件默认“负缓存 1800 秒”。"),
     ],
     "conclusion": ("若 payment-gateway 安装了安全管理器，解析结果会被「永久缓存」，VIP 切换后必须重启才能生效。",
                    ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "确认 payment-gateway 是否安装了安全管理器。"),
     ],
     "limits": LIM},

    {"id": "jd-07", "label": "G", "cat": "placeholder-filled", "uns": [],
     "why": "ss -tnp | grep <port> filled with 5432, the port of both addresses in jd1's query; the addresses are the "
            "query's.",
     "analysis": [
         ("a1", "N", ["jd1"], [],
          "用 `ss -tnp | grep 5432` 查看 payment-gateway 连接的对端地址：若仍是 10.30.2.15:5432，说明连接池没有重建连接；"
          "应为 10.30.2.41:5432。"),
     ],
     "conclusion": ("对端地址能直接区分是 DNS 缓存问题还是连接池问题。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "在 payment-gateway 容器内执行 `ss -tnp | grep 5432`，再执行 `jcmd <pid> VM.system_properties | grep "
                        "inetaddr`。"),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "jd-08", "label": "U", "cat": "conversion", "uns": ["30 分钟"],
     "why": "maxLifetime is stated as 1800000 毫秒; '30 分钟' is a unit conversion (30 is stated only as 30 秒 / 30s).",
     "analysis": [
         ("a1", "N", ["jd1"], [],
          "HikariCP 的 maxLifetime 默认 30 分钟，DNS 缓存过期后长连接仍会指向旧地址 10.30.2.15:5432。"),
     ],
     "conclusion": ("payment-gateway 的旧连接不会随 DNS 更新而断开。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "通过 JMX 调用 softEvictConnections() 重建连接。"),
     ],
     "limits": LIM},

    {"id": "jd-09", "label": "U", "cat": "near-miss-identifier", "uns": ["networkaddress.cache.negative_ttl"],
     "why": "networkaddress.cache.negative_ttl changes a separator of the stated networkaddress.cache.negative.ttl (a near "
            "miss).",
     "analysis": [
         ("a1", "N", ["jd1"], [],
          "解析失败的结果由 networkaddress.cache.negative_ttl 控制，默认 10 秒；解析成功的结果默认缓存 30 秒。"),
     ],
     "conclusion": ("DNS 缓存本身不会让 payment-gateway 长时间连旧地址。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 jcmd <pid> VM.system_properties | grep inetaddr 确认参数。"),
     ],
     "limits": LIM},

    {"id": "jd-10", "label": "U", "cat": "derived", "uns": ["6 次"],
     "why": "6 (3 search domains × A/AAAA) is derived; the evidence states 3 search domains, 8 queries and 4 per type, not "
            "6.",
     "analysis": [
         ("a1", "N", ["jd2"], [],
          "options ndots:5 时，一次解析最多 8 次查询，其中 6 次是 search 域带来的无效查询。"),
     ],
     "conclusion": ("payment-gateway 解析 db-primary.pay.internal 慢与 ndots 设置有关。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "在 Pod 的 dnsConfig 中设置 ndots: \"2\"。"),
     ],
     "limits": LIM},

    {"id": "jd-11", "label": "U", "cat": "wrong-version", "uns": ["17.0.9"],
     "why": "The query says Java 17; the patch version 17.0.9 is not stated.",
     "analysis": [
         ("a1", "N", ["jd1"], [],
          "payment-gateway 运行在 JDK 17.0.9 上，未安装安全管理器时 networkaddress.cache.ttl 默认 30 秒。"),
     ],
     "conclusion": ("JVM 的 DNS 缓存 30 秒后就会过期。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "确认连接池中的连接是否仍指向 10.30.2.15:5432。"),
     ],
     "limits": LIM},

    {"id": "jd-12", "label": "U", "cat": "invented-quote", "uns": ["解析失败的结果会被永久缓存"],
     "why": "The quotation is not in the evidence: the excerpt says failures are cached per networkaddress.cache.negative.ttl "
            "(default 10 秒), and 永久缓存 applies to successful lookups under a security manager.",
     "analysis": [
         ("a1", "N", ["jd1"], [],
          "手册原话是“解析失败的结果会被永久缓存”，因此 payment-gateway 在切换期间的解析失败可能一直被记住。"),
     ],
     "conclusion": ("payment-gateway 的 DNS 缓存需要检查。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "检查 networkaddress.cache.negative.ttl 的实际值。"),
     ],
     "limits": LIM},

    {"id": "jd-13", "label": "U", "cat": "negation", "uns": ["1200000"],
     "why": "'不要低于 1200000 毫秒' still states 1200000, which the evidence does not give.",
     "analysis": [
         ("a1", "N", ["jd1"], [],
          "HikariCP 的 maxLifetime 默认 1800000 毫秒，应比数据库侧的连接超时至少短 30 秒。"),
     ],
     "conclusion": ("连接池的长连接是 payment-gateway 仍连旧地址的主要原因。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "适当调小 maxLifetime，但不要低于 1200000 毫秒，以免连接频繁重建。"),
     ],
     "limits": LIM},

    {"id": "jd-14", "label": "U", "cat": "disguise", "uns": ["६०"],
     "why": "Devanagari digits display 60, which the evidence does not state as a value (it gives 30 and 10).",
     "analysis": [
         ("a1", "N", ["jd1"], [],
          "networkaddress.cache.ttl 未安装安全管理器时默认 30 秒，DNS 记录 db-primary.pay.internal 的 TTL 也是 30s。"),
     ],
     "conclusion": ("JVM 缓存与 DNS TTL 一致，不是主要问题。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "若要放宽，可把 networkaddress.cache.ttl 设为 ६० 秒，并同步检查连接池。"),
     ],
     "limits": LIM},

    {"id": "jd-15", "label": "U", "cat": "other-citation", "uns": ["ndots:5"],
     "why": "a1 cites jd1 only; ndots:5 is stated in jd2, which a1 does not cite.",
     "analysis": [
         ("a1", "N", ["jd1"], [],
          "payment-gateway 容器使用默认的 ndots:5，而 JVM 的 networkaddress.cache.ttl 默认 30 秒。"),
         ("a2", "N", ["jd2"], [],
          "少于 5 个点的名字会先依次尝试 search 域，一次解析最多产生 8 次查询。"),
     ],
     "conclusion": ("解析慢来自 search 域，连旧地址来自缓存与连接池。", ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "对 db-primary.pay.internal 使用末尾带点的全限定名。"),
     ],
     "limits": LIM},
]
