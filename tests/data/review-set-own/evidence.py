"""The ten evidence sets of the project's own review set, as py-rag `raw-hits` records (SPEC 2).

Invented incidents, none of them in the visible set (`../shared/review-set/`). One run per incident,
2-3 lookups (tool calls) per run. Each lookup's query names the incident's own facts (service, host,
alert value); the hits are runbook excerpts rich in specifics. A lookup with no hits becomes a NO_EVIDENCE
projection (cited only by NEGATIVE_OBSERVATION items).

`build.py` turns these records into projections with `evidence-chain pipe` and writes `ledger.jsonl`.
"""
from __future__ import annotations

TRACE = {"mode": "hybrid", "filters": {}, "recall_count": 20, "rerank_model": "BAAI/bge-reranker-v2-m3",
         "no_evidence_basis": None}


def hit(key, source, title, breadcrumb, excerpt, score):
    doc = key.split("#", 1)[0]
    level = "PRECISE" if score >= 0.75 else "REFERENCE"
    return {"evidence_key": key, "document_id": doc, "source": source, "title": title,
            "breadcrumb": breadcrumb, "excerpt": excerpt, "quality_score": score, "relevance_level": level}


def raw(run_id, call, query, hits, category):
    trace = dict(TRACE, filters={"category": category})
    if not hits:
        trace["no_evidence_basis"] = "no_candidate_above_threshold"
        return {"run_id": run_id, "tool_call_id": call,
                "response": {"query": query, "mode": "hybrid", "hits": [], "relevance_level": None,
                             "evidence_status": "no_evidence", "retrieval_trace": trace}}
    top = hits[0]["relevance_level"]
    return {"run_id": run_id, "tool_call_id": call,
            "response": {"query": query, "mode": "hybrid", "hits": hits, "relevance_level": top,
                         "evidence_status": "supported", "retrieval_trace": trace}}


# short name of each set -> (run_id, language of its evidence and drafts, incident)
SETS = {
    "mysql": ("run-mysql-lag-3318", "zh", "MySQL replication lag"),
    "rabbit": ("run-rabbitmq-backlog-7741", "en", "RabbitMQ queue backlog"),
    "hpa": ("run-hpa-stuck-2087", "zh", "HPA not scaling"),
    "s3": ("run-s3-403-5526", "en", "S3 PutObject 403 AccessDenied"),
    "node": ("run-node-heap-9062", "en", "Node.js heap out of memory"),
    "ct": ("run-conntrack-4471", "zh", "Linux conntrack table full"),
    "zk": ("run-zk-session-6150", "zh", "ZooKeeper session expiry"),
    "prw": ("run-promrw-drop-8823", "zh", "Prometheus remote-write drops"),
    "grpc": ("run-grpc-deadline-1374", "en", "gRPC DEADLINE_EXCEEDED"),
    "cass": ("run-cass-tomb-3905", "en", "Cassandra tombstones and read timeouts"),
}

# short call name -> (set, tool_call_id)
CALLS = {
    "my1": ("mysql", "call_my_lag"), "my2": ("mysql", "call_my_inventory"), "my3": ("mysql", "call_my_ddl"),
    "rb1": ("rabbit", "call_rmq_backlog"), "rb2": ("rabbit", "call_rmq_cluster"),
    "hp1": ("hpa", "call_hpa_metrics"), "hp2": ("hpa", "call_hpa_ingress"), "hp3": ("hpa", "call_hpa_quota"),
    "s31": ("s3", "call_s3_denied"), "s32": ("s3", "call_s3_client"), "s33": ("s3", "call_s3_cloudtrail"),
    "nd1": ("node", "call_node_heap"), "nd2": ("node", "call_node_runtime"),
    "ct1": ("ct", "call_ct_full"), "ct2": ("ct", "call_ct_baseline"),
    "zk1": ("zk", "call_zk_expire"), "zk2": ("zk", "call_zk_ensemble"),
    "pr1": ("prw", "call_prw_queue"), "pr2": ("prw", "call_prw_receiver"),
    "gr1": ("grpc", "call_grpc_deadline"), "gr2": ("grpc", "call_grpc_ingress"), "gr3": ("grpc", "call_grpc_changes"),
    "cs1": ("cass", "call_cass_tombstone"), "cs2": ("cass", "call_cass_ring"),
}


def _r(call, query, hits, category):
    s, tcid = CALLS[call]
    return raw(SETS[s][0], tcid, query, hits, category)


RECORDS = [
    # ------------------------------------------------------------------ mysql: replication lag (zh)
    _r("my1", "db-orders-replica-2 Seconds_Behind_Source 1860（告警阈值 300），源库 db-orders-primary 10.20.4.11:3306，"
              "告警 MySQLReplicaLagHigh", [
        hit("dba-mysql-repl#chunk-1", "dba-wiki/mysql", "MySQL 复制延迟排查", "数据库 > MySQL > 复制延迟",
            "复制延迟以 SHOW REPLICA STATUS\\G 输出中的 Seconds_Behind_Source 为准（8.0.22 之前的版本为 SHOW SLAVE STATUS 与 "
            "Seconds_Behind_Master）。先确认 Replica_IO_Running 与 Replica_SQL_Running 均为 Yes，再比较 Read_Source_Log_Pos 与 "
            "Exec_Source_Log_Pos：IO 线程跟得上而 Exec_Source_Log_Pos 长时间不动，说明 SQL 线程在回放大事务。单个事务修改超过 "
            "100 万行或产生超过 1GB 的 binlog 时，副本会在同一位置停留很久。SQL 线程落后时开启并行复制："
            "replica_parallel_workers = 16，replica_parallel_type = LOGICAL_CLOCK，replica_preserve_commit_order = ON。"
            "回放报错写在 Last_SQL_Error 中，例如 “Could not execute Update_rows event on table orders.order_items; Can't find "
            "record in 'order_items', Error_code: 1032”。", 0.9),
        hit("dba-mysql-repl#chunk-2", "dba-wiki/mysql", "MySQL 复制延迟排查", "数据库 > MySQL > 缓解与参数",
            "副本追赶期间可临时放宽持久化：innodb_flush_log_at_trx_commit = 2、sync_binlog = 0，追平后改回 1 和 1。"
            "binlog_expire_logs_seconds = 604800 时源库只保留 7 天 binlog，副本落后期间不要在源库执行 PURGE BINARY LOGS。"
            "网络层面，replica_net_timeout 默认 60 秒，source_heartbeat_period 设为 30 秒。读流量通过 ProxySQL 摘除："
            "mysql_servers.max_replication_lag = 10（单位：秒），延迟超过该值的副本会被标记为 SHUNNED。复制延迟的 p95 与 p99 "
            "面板分别在 120 秒与 600 秒告警。源库 max_connections = 2000，其中 max_user_connections = 500 留给业务账号。"
            "慢日志分析：pt-query-digest /var/lib/mysql/<host>-slow.log --since 1h。", 0.84),
    ], "database"),
    _r("my2", "db-orders-replica-2 MySQL 版本 规格 复制拓扑", [
        hit("dba-asset-mysql#chunk-3", "dba-wiki/资产", "MySQL 实例清单", "数据库 > 资产 > 订单库",
            "订单库一主两从：db-orders-primary（10.20.4.11）、db-orders-replica-1（10.20.4.12）、db-orders-replica-2"
            "（10.20.4.13），均为 MySQL 8.0.35，binlog_format = ROW，gtid_mode = ON。实例规格 16 vCPU、64GiB 内存，数据盘 2TiB，"
            "IOPS 上限 25000。db-orders-replica-2 同时承担每日 02:00 的 mysqldump 全量备份与报表查询，备份期间 CPU 使用率在 "
            "70%~80% 之间。", 0.78),
    ], "database"),
    _r("my3", "db-orders-primary 最近 24 小时 DDL 变更记录 orders.order_items", [], "change"),

    # ------------------------------------------------------------------ rabbit: queue backlog (en)
    _r("rb1", "RabbitMQ queue billing.invoices messages_ready 1240000, messages_unacknowledged 8000, 12 consumers, "
              "alert RabbitMQQueueBacklog on vhost /billing", [
        hit("mq-rabbit-backlog#chunk-1", "messaging-runbooks/rabbitmq", "Queue backlog", "RabbitMQ > Queues > Backlog",
            "A growing messages_ready count means publishers outpace consumers; a growing messages_unacknowledged count means "
            "consumers hold deliveries without acking them. List the queues with `rabbitmqctl list_queues -p <vhost> name "
            "messages_ready messages_unacknowledged consumers consumer_utilisation`. A consumer_utilisation below 0.5 usually "
            "means the prefetch is too small or the consumer is slow per message. Set basic.qos prefetch_count to 500 for fast "
            "consumers and lower it for slow ones. Since RabbitMQ 3.8.15 consumer_timeout defaults to 1800000 ms (30 minutes); "
            "a consumer that holds a delivery longer has its channel closed with \"PRECONDITION_FAILED - delivery "
            "acknowledgement on channel 1 timed out. Timeout value used: 1800000 ms. This timeout value can be configured, "
            "see consumers doc guide to learn more\".", 0.9),
        hit("mq-rabbit-backlog#chunk-2", "messaging-runbooks/rabbitmq", "Queue backlog",
            "RabbitMQ > Queues > Memory and flow control",
            "When a node's memory use crosses vm_memory_high_watermark.relative = 0.4 of its RAM, or free disk drops below "
            "disk_free_limit.absolute = 2GB, the broker blocks every publishing connection and the management UI shows them as "
            "blocked. Quorum queues keep their working set in memory, so cap long backlogs with x-max-length = 2000000 and "
            "x-overflow = reject-publish. Lazy mode is a no-op since 3.12. Heartbeats: heartbeat = 60 (seconds) on the server "
            "and a 60s timeout on the client; channel_max = 2047; frame_max = 131072.", 0.83),
    ], "messaging"),
    _r("rb2", "rabbit-prod-fra cluster version, nodes and the billing.invoices consumers", [
        hit("mq-rabbit-inventory#chunk-4", "messaging-runbooks/inventory", "rabbit-prod-fra",
            "Inventory > RabbitMQ > rabbit-prod-fra",
            "rabbit-prod-fra runs RabbitMQ 3.12.13 on Erlang/OTP 26.2 with three nodes (rabbit@mq-fra-1, rabbit@mq-fra-2, "
            "rabbit@mq-fra-3), each with 32 GiB of RAM. billing.invoices is a quorum queue with a replication factor of 3, "
            "consumed by invoice-renderer (Spring AMQP 3.1.2, concurrentConsumers=4, maxConcurrentConsumers=12, prefetch 250). "
            "AMQP listeners accept TLS 1.2 and TLS 1.3 on port 5671; plain AMQP on 5672 is disabled. The management API "
            "listens on 15672.", 0.79),
    ], "messaging"),

    # ------------------------------------------------------------------ hpa: HPA not scaling (zh)
    _r("hp1", "HPA checkout-web 未扩容，当前副本 4（maxReplicas 20），CPU 利用率 180%（目标 70%），命名空间 shop-web，"
              "pod checkout-web-7d4b9c8f6-p2wzk 报 FailedGetResourceMetric", [
        hit("k8s-hpa#chunk-1", "平台手册/kubernetes", "HPA 不扩容排查", "Kubernetes > 弹性 > HPA 不扩容",
            "先执行 kubectl describe hpa <hpa> -n <namespace>，看 Conditions 中的 AbleToScale、ScalingActive 与 ScalingLimited。"
            "事件 “failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource "
            "metrics API” 说明 metrics-server 不可用或 Pod 没有设置 resources.requests.cpu；用 kubectl top pod <pod> -n "
            "<namespace> 验证指标是否可取。kube-controller-manager 的 --horizontal-pod-autoscaler-sync-period 默认 15s，"
            "--horizontal-pod-autoscaler-tolerance 默认 0.1，即利用率在目标值 ±10% 以内不调整。metrics-server 需要正确的 "
            "kubelet 证书或 --kubelet-insecure-tls，抓取周期 --metric-resolution=60s。", 0.88),
        hit("k8s-hpa#chunk-2", "平台手册/kubernetes", "HPA 不扩容排查", "Kubernetes > 弹性 > 扩缩容行为",
            "autoscaling/v2 的 behavior 字段控制速度：scaleUp.stabilizationWindowSeconds: 0，"
            "scaleDown.stabilizationWindowSeconds: 300；scaleUp 策略默认每 15 秒最多翻倍（Percent 100）或增加 4 个 Pod，取较大者。"
            "副本在上下限之间来回摆动称为扩缩容抖动，可把 scaleDown 窗口调到 600。CPU 目标利用率建议 70%~80%，低于 50% 会造成资源"
            "浪费。副本数达到 maxReplicas 时 ScalingLimited 为 True，原因 TooManyReplicas。集群为 Kubernetes 1.27，"
            "autoscaling/v2 自 1.23 起 GA。", 0.81),
    ], "kubernetes"),
    _r("hp2", "checkout-web 入口 ingress-nginx 5xx 比例 6.3%，命名空间 shop-web", [
        hit("k8s-ingress-5xx#chunk-2", "平台手册/网关", "ingress-nginx 5xx 对照", "网关 > ingress-nginx > 状态码",
            "ingress-nginx 返回 503 表示 Service 没有可用的 Endpoints（Pod 全部未就绪或已被驱逐），返回 504 表示上游在 "
            "proxy-read-timeout（注解 nginx.ingress.kubernetes.io/proxy-read-timeout，默认 60 秒）内没有返回响应头。扩容不及时时"
            "两者会同时出现。新 Pod 从创建到就绪通常需要 40~90 秒，readinessProbe 为 initialDelaySeconds: 20、periodSeconds: 5。"
            "控制器错误日志在 /var/log/nginx/error.log，访问日志中的 $upstream_status 字段可区分两类错误。", 0.77),
    ], "gateway"),
    _r("hp3", "shop-web 命名空间 ResourceQuota 与 LimitRange 变更记录", [], "change"),

    # ------------------------------------------------------------------ s3: PutObject 403 (en)
    _r("s31", "report-exporter PutObject 403 AccessDenied on bucket acme-reports-prod, 1312 errors in 10m, role "
              "arn:aws:iam::418277309145:role/report-exporter", [
        hit("sec-s3-403#chunk-1", "cloud-runbooks/s3", "S3 403 AccessDenied", "AWS > S3 > 403 errors",
            "An AccessDenied (HTTP 403) on PutObject usually means one of: the IAM policy lacks s3:PutObject on "
            "arn:aws:s3:::<bucket>/*, the bucket policy has an explicit Deny, the object is written with SSE-KMS and the role "
            "lacks kms:GenerateDataKey on the key, or the request is signed with a clock more than 15 minutes off "
            "(RequestTimeTooSkewed, also a 403). Read the error code, not only the status: SignatureDoesNotMatch and "
            "InvalidAccessKeyId are 403s too. Simulate with `aws iam simulate-principal-policy --policy-source-arn <role-arn> "
            "--action-names s3:PutObject --resource-arns arn:aws:s3:::<bucket>/<key>`. A bucket policy condition "
            "\"aws:SecureTransport\": \"false\" denies plain HTTP; one on aws:SourceVpce denies requests that do not come "
            "through the VPC endpoint.", 0.89),
        hit("sec-s3-403#chunk-2", "cloud-runbooks/s3", "S3 403 AccessDenied", "AWS > S3 > Presigned URLs and limits",
            "Presigned URLs signed with SigV4 are valid for at most 604800 seconds (7 days) through X-Amz-Expires; a URL signed "
            "with a role session expires with the session, after 3600 seconds by default (DurationSeconds). An expired URL "
            "answers 403 with \"Request has expired\". S3 accepts TLS 1.2 and TLS 1.3; clients limited to TLS 1.0 or 1.1 get a "
            "handshake failure, not a 403. Per prefix, S3 takes 3,500 PUT/COPY/POST/DELETE and 5,500 GET/HEAD requests per "
            "second; above that it answers 503 Slow Down, not 403. Dual-stack endpoints (s3.dualstack.<region>.amazonaws.com) "
            "accept IPv4 and IPv6; an aws:SourceIp condition must then list both the IPv4 and the IPv6 CIDRs.", 0.82),
    ], "cloud"),
    _r("s32", "report-exporter S3 client configuration and SDK version", [
        hit("svc-report-exporter#chunk-2", "service-catalog/report-exporter", "report-exporter runtime",
            "Services > report-exporter > Runtime",
            "report-exporter runs on JDK 17 with aws-sdk-java 2.21.29 and writes to acme-reports-prod in eu-central-1 through "
            "the VPC endpoint vpce-0a4c1e9f3b7d21e58. Objects are encrypted with SSE-KMS under the key alias "
            "alias/reports-prod. Client settings: apiCallTimeout 120s, apiCallAttemptTimeout 30s, maxConcurrency 64, "
            "numRetries 3 with full-jitter backoff. The pods run in namespace reporting and sync their clocks with "
            "169.254.169.123 (Amazon Time Sync); their clock drift alert fires above 500ms.", 0.8),
    ], "cloud"),
    _r("s33", "CloudTrail AccessDenied events for the report-exporter role since 2025-04-02 08:00 UTC", [], "cloud"),

    # ------------------------------------------------------------------ node: Node.js heap OOM (en)
    _r("nd1", "pod cart-api-6c9f8d7b5-tq4mn in namespace storefront restarted with 'FATAL ERROR: Reached heap limit "
              "Allocation failed - JavaScript heap out of memory', container limit 2Gi, --max-old-space-size=1536", [
        hit("rb-node-heap#chunk-1", "platform-runbooks/nodejs", "Node.js heap out of memory", "Node.js > Memory > Heap OOM",
            "\"FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\" means V8's old space hit its "
            "limit; the process aborts with exit code 134 (SIGABRT), unlike the kernel OOM killer's 137. Set the limit "
            "explicitly with --max-old-space-size (in MiB) at about 75% of the container limit, and keep steady-state old-space "
            "usage at 70%~80% of it. Read the last crash with `kubectl logs <pod> -n <namespace> --previous`; to take a heap "
            "snapshot start the process with `node --heapsnapshot-signal=SIGUSR2 server.js` and run `kubectl exec <pod> -n "
            "<namespace> -- kill -USR2 1`. --heapsnapshot-near-heap-limit=3 writes up to three snapshots as the heap nears its "
            "limit (Node.js 14.18 and later). Watch nodejs_heap_size_used_bytes and nodejs_gc_duration_seconds from "
            "prom-client.", 0.91),
        hit("rb-node-heap#chunk-2", "platform-runbooks/nodejs", "Node.js heap out of memory",
            "Node.js > HTTP server > Timeouts",
            "Leaked sockets hold memory too. Node.js 18 changed the server defaults: server.requestTimeout is 300000ms, "
            "server.headersTimeout is 60000ms and server.keepAliveTimeout is 5000ms. Behind an AWS ALB with an idle timeout of "
            "60s, keepAliveTimeout must be longer than the balancer's idle timeout, for example 65000, or clients see sporadic "
            "502s. Large JSON bodies parsed in one piece (body-parser limit '10mb') create short-lived strings that reach the "
            "old space under load.", 0.84),
    ], "runtime"),
    _r("nd2", "cart-api Node.js version, image and memory settings", [
        hit("svc-cart-api#chunk-1", "service-catalog/cart-api", "cart-api runtime", "Services > cart-api > Runtime",
            "cart-api runs Node.js 18.19.0 (image node:18.19.0-bookworm-slim) with NODE_OPTIONS=\"--max-old-space-size=1536 "
            "--heapsnapshot-near-heap-limit=2\". The deployment sets resources.requests.memory 1Gi and "
            "resources.limits.memory 2Gi with 6 replicas, and serves HTTP/1.1 and HTTP/2 through the storefront gateway. "
            "/healthz answers within 200ms; the liveness probe fails after 3 misses at a 10s period.", 0.79),
    ], "runtime"),

    # ------------------------------------------------------------------ ct: conntrack table full (zh)
    _r("ct1", "节点 node-edge-07 dmesg 出现 nf_conntrack: table full, dropping packet，nf_conntrack_count 524288，"
              "告警 NodeConntrackTableFull", [
        hit("kb-conntrack#chunk-1", "运维知识库/网络", "conntrack 表满排查", "节点 > 网络 > conntrack",
            "内核日志出现 “nf_conntrack: table full, dropping packet” 时，新连接的首包会被直接丢弃，客户端表现为连接超时或偶发 "
            "5xx。用 conntrack -S 查看 drop 与 insert_failed 计数，用 cat /proc/sys/net/netfilter/nf_conntrack_count 与 "
            "nf_conntrack_max 比较。当前 net.netfilter.nf_conntrack_max = 524288，哈希桶 net.netfilter.nf_conntrack_buckets = "
            "131072。表满的常见原因是短连接过多或 TIME_WAIT 条目保留过久：nf_conntrack_tcp_timeout_established 默认 432000 秒"
            "（5 天），nf_conntrack_tcp_timeout_time_wait 默认 120 秒，nf_conntrack_tcp_timeout_close_wait 默认 60 秒。"
            "使用率达到 70%~80% 时应预警，超过 90% 需要扩容。", 0.9),
        hit("kb-conntrack#chunk-2", "运维知识库/网络", "conntrack 表满排查", "节点 > 网络 > 调整与持久化",
            "临时调整：sysctl -w net.netfilter.nf_conntrack_max=1048576，同时 echo 262144 > "
            "/sys/module/nf_conntrack/parameters/hashsize；持久化写入 /etc/sysctl.d/90-conntrack.conf。每个条目约占 320 字节，"
            "1048576 个条目约 320MiB 内存。kube-proxy 在 iptables 模式下按 --conntrack-max-per-core（默认 32768）与 "
            "--conntrack-min（默认 131072）自动设置上限，启动时会覆盖手工设置的值，需要同时修改 kube-proxy 的 ConfigMap。IPv4 与 "
            "IPv6 的连接共用同一张表。查看来源最多的地址：conntrack -L -o extended | awk '{print $7}' | sort | uniq -c | "
            "sort -rn | head -20。", 0.83),
    ], "network"),
    _r("ct2", "node-edge-07 内核版本 CPU 核数 内存 kube-proxy 模式", [
        hit("kb-node-baseline#chunk-5", "运维知识库/基线", "边缘节点基线", "节点 > 基线 > 边缘节点",
            "边缘节点 node-edge-01 至 node-edge-12 均为 32 核、128GiB 内存，内核 5.15.0-91-generic（Ubuntu 22.04），"
            "kube-proxy 1.27.8 运行在 iptables 模式，ConfigMap 为 kube-system/kube-proxy，字段 conntrack.maxPerCore: 32768。"
            "边缘节点承载 ingress 入口流量，高峰期新建连接约 18000 次/秒。", 0.78),
    ], "network"),

    # ------------------------------------------------------------------ zk: ZooKeeper session expiry (zh)
    _r("zk1", "order-sync 与 ZooKeeper 会话过期 23 次，报 SessionExpiredException，连接串 "
              "zk-1.infra:2181,zk-2.infra:2181,zk-3.infra:2181，pod order-sync-5b8d7c6f9-h7kzq", [
        hit("mw-zk-session#chunk-1", "中间件手册/zookeeper", "ZooKeeper 会话过期", "中间件 > ZooKeeper > 会话",
            "客户端日志 “org.apache.zookeeper.KeeperException$SessionExpiredException: KeeperErrorCode = Session expired for "
            "/order-sync/leader” 表示服务端已判定会话过期，临时节点随之删除，客户端必须新建会话并重新注册。会话超时由客户端请求、"
            "服务端裁剪：取值在 minSessionTimeout 与 maxSessionTimeout 之间，默认分别为 tickTime 的 2 倍与 20 倍；tickTime=2000"
            "（毫秒）时即 4000 与 40000。Curator 客户端默认 sessionTimeoutMs=60000、connectionTimeoutMs=15000，请求的 60000 会被"
            "裁剪到 40000。最常见的原因是客户端长时间停顿（Full GC 超过会话超时）或网络分区。用 echo mntr | nc <host> 2181 查看 "
            "zk_avg_latency、zk_outstanding_requests 与 zk_num_alive_connections。", 0.9),
        hit("mw-zk-session#chunk-2", "中间件手册/zookeeper", "ZooKeeper 会话过期", "中间件 > ZooKeeper > 服务端参数",
            "zoo.cfg 推荐值：tickTime=2000、initLimit=10、syncLimit=5、maxClientCnxns=60，autopurge.snapRetainCount=3、"
            "autopurge.purgeInterval=24。事务日志 dataLogDir 应放在独立磁盘上，fsync 超过 1000ms 时日志会出现 “fsync-ing the "
            "write ahead log in SyncThread:1 took 1342ms which will adversely effect operation latency.”。JVM 堆建议 -Xms4g "
            "-Xmx4g，GC 停顿需低于 tickTime。客户端与集群之间可启用 TLS 1.2 与 TLS 1.3（ssl.enabledProtocols=TLSv1.2,TLSv1.3），"
            "端口 secureClientPort=2281。", 0.82),
    ], "middleware"),
    _r("zk2", "zk-prod 集群版本 JDK 节点规格 order-sync Curator 版本", [
        hit("mw-asset-zk#chunk-2", "中间件手册/资产", "ZooKeeper 集群清单", "中间件 > 资产 > zk-prod",
            "zk-prod 由 zk-1.infra、zk-2.infra、zk-3.infra 三个节点组成，ZooKeeper 3.8.3，运行在 JDK 17 上，每节点 8 核 16GiB。"
            "order-sync 使用 Curator 5.5.0（对应 ZooKeeper 客户端 3.8.x），重试策略 ExponentialBackoffRetry(1000, 3)。"
            "2025 年 3 月起 order-sync 的 Full GC 停顿 p99 达到 45 秒。", 0.77),
    ], "middleware"),

    # ------------------------------------------------------------------ prw: Prometheus remote-write drops (zh)
    _r("pr1", "prometheus-k8s-0 remote write 丢样本，prometheus_remote_storage_samples_dropped_total 每分钟 12000，"
              "远端 thanos-receive.monitoring:19291，分片数达到 max_shards 200", [
        hit("obs-prom-rw#chunk-1", "可观测性手册/prometheus", "Remote write 丢样本排查", "可观测性 > Prometheus > Remote write",
            "remote write 的积压看 prometheus_remote_storage_highest_timestamp_in_seconds 与 "
            "prometheus_remote_storage_queue_highest_sent_timestamp_seconds 之差，超过 120 秒即为分片积压。丢弃分两类："
            "prometheus_remote_storage_samples_dropped_total 多因 relabel 或样本过旧被丢，prometheus_remote_storage_samples_failed_total "
            "表示远端返回不可重试的 4xx（如 400 out of order sample）。远端返回 429 或 5xx 时按 min_backoff: 30ms 到 "
            "max_backoff: 5s 指数退避重试。queue_config 参考值：capacity: 10000，max_shards: 200，min_shards: 1，"
            "max_samples_per_send: 2000，batch_send_deadline: 5s，remote_timeout: 30s。分片数长期停在 max_shards 说明远端吞吐"
            "不够，单纯调大分片只会加重远端压力。", 0.89),
        hit("obs-prom-rw#chunk-2", "可观测性手册/prometheus", "Remote write 丢样本排查", "可观测性 > Prometheus > WAL 与重分片",
            "remote write 从 WAL 读样本；远端不可用超过约 2 小时（WAL 截断周期）后，未发送的样本会随 WAL 段删除而丢失，日志出现 "
            "“Skipping resharding, last successful send was beyond threshold”。重分片每 10 秒评估一次。Prometheus v2.45 起 "
            "metadata 默认随 remote write 发送，send_exemplars 与 send_native_histograms 需显式开启。查看当前分片：curl -s "
            "http://<prometheus>:9090/api/v1/status/runtimeinfo，以及 prometheus_remote_storage_shards 与 "
            "prometheus_remote_storage_shards_desired 指标；desired 持续大于 max_shards 时应扩容远端。", 0.83),
    ], "observability"),
    _r("pr2", "thanos-receive 副本数 版本 写入限流配置", [
        hit("obs-thanos-receive#chunk-3", "可观测性手册/thanos", "Thanos Receive 写入链路", "可观测性 > Thanos > Receive",
            "thanos-receive 为 StatefulSet，3 个副本，Thanos v0.32.5，复制因子 --receive.replication-factor=3，哈希环由 "
            "thanos-receive-controller 维护。写入限流在 --receive.limits-config-file 中配置："
            "write.default.request.series_limit: 5000，write.default.request.samples_limit: 50000，"
            "write.global.max_concurrency: 30。超限时返回 429 “too many requests”，超时返回 503。监听端口：gRPC 10901，"
            "HTTP 10902，remote write 19291。", 0.76),
    ], "observability"),

    # ------------------------------------------------------------------ grpc: DEADLINE_EXCEEDED (en)
    _r("gr1", "checkout-gateway -> payment-svc gRPC DEADLINE_EXCEEDED rate 4.6%, client deadline 800ms, p99 latency 1.9s, "
              "pod payment-svc-6f8b7d9c4-zr5qx", [
        hit("rb-grpc-deadline#chunk-1", "platform-runbooks/grpc", "gRPC DEADLINE_EXCEEDED", "gRPC > Errors > DEADLINE_EXCEEDED",
            "Status code 4, DEADLINE_EXCEEDED, means the deadline the client set expired before the call completed; the server "
            "may still finish the work. Clients should always set a deadline: checkout-gateway sets 800ms on payment calls and "
            "the default for internal calls is 15s. Propagate the remaining deadline downstream instead of starting a new one. "
            "Compare grpc_server_handling_seconds p95 and p99 for payment-svc with the client deadline; when p99 is above the "
            "deadline, the error rate follows the tail. Retries must respect the deadline: with a retryPolicy of maxAttempts: 3, "
            "initialBackoff: 0.1s, maxBackoff: 1s, backoffMultiplier: 2, a retry that would start after the deadline is not "
            "sent. The client error reads \"io.grpc.StatusRuntimeException: DEADLINE_EXCEEDED: deadline exceeded after "
            "0.799873s\".", 0.9),
        hit("rb-grpc-deadline#chunk-2", "platform-runbooks/grpc", "gRPC DEADLINE_EXCEEDED", "gRPC > Connections > Keepalive",
            "Idle connections dropped by a load balancer surface as UNAVAILABLE, or as deadline errors on the first call after "
            "the drop. Client keepalive: grpc.keepalive_time_ms=30000 and grpc.keepalive_timeout_ms=10000; the server must allow "
            "it with permitKeepAliveTime 20s, or it answers GOAWAY with \"too_many_pings\". HTTP/2 allows 100 concurrent streams "
            "per connection by default (MAX_CONCURRENT_STREAMS); a client that multiplexes more calls queues them locally, which "
            "adds latency before the call even starts. Count errors with `kubectl logs <pod> -c payment-svc --since=15m | grep "
            "-c DEADLINE_EXCEEDED` and read the sidecar with `kubectl exec <pod> -c istio-proxy -- pilot-agent request GET "
            "stats | grep upstream_rq_timeout`.", 0.84),
    ], "rpc"),
    _r("gr2", "payment-svc ingress-nginx gRPC timeouts and TLS, host payments.internal.example.com", [
        hit("rb-ingress-grpc#chunk-3", "platform-runbooks/ingress", "gRPC through ingress-nginx",
            "Ingress > ingress-nginx > gRPC backends",
            "Annotate the Ingress with nginx.ingress.kubernetes.io/backend-protocol: \"GRPC\". The generated location uses "
            "grpc_read_timeout 60s; grpc_send_timeout 60s; client_body_timeout 60s; keepalive_timeout 75s; the controller "
            "answers 504 when grpc_read_timeout expires, 502 when the backend resets the stream and 503 when the Service has no "
            "ready endpoints. gRPC needs HTTP/2 end to end, so the listener requires TLS 1.2 or TLS 1.3 with ALPN h2. "
            "ingress-nginx controller 1.10.1 bundles nginx 1.25.5. Long-lived streams should raise grpc_read_timeout and "
            "grpc_send_timeout to 3600s together.", 0.8),
    ], "gateway"),
    _r("gr3", "payment-svc deploys and config changes since 2025-05-06 14:00 UTC", [], "change"),

    # ------------------------------------------------------------------ cass: tombstones (en)
    _r("cs1", "cass-ring-eu read timeouts on keyspace orders table order_events, TombstoneOverwhelmingException, node "
              "10.30.8.21, ReadTimeout rate 2.7%", [
        hit("db-cass-tomb#chunk-1", "db-runbooks/cassandra", "Tombstones and read timeouts", "Cassandra > Reads > Tombstones",
            "A read that scans more than tombstone_warn_threshold (default 1000) tombstones logs a warning; above "
            "tombstone_failure_threshold (default 100000) the read is aborted with TombstoneOverwhelmingException and the "
            "coordinator returns a ReadFailure. The log line reads \"Scanned over 100001 tombstones during query 'SELECT * FROM "
            "orders.order_events WHERE ...' (last scanned row token was ...); query aborted\". Tombstones become purgeable only "
            "after gc_grace_seconds (default 864000, 10 days) and a compaction that includes every copy of the partition. Find "
            "the tables with `nodetool tablestats orders.order_events` (look at \"Average tombstones per slice (last five "
            "minutes)\") and `nodetool tablehistograms orders order_events`.", 0.9),
        hit("db-cass-tomb#chunk-2", "db-runbooks/cassandra", "Tombstones and read timeouts",
            "Cassandra > Reads > Timeouts and compaction",
            "read_request_timeout_in_ms: 5000 and range_request_timeout_in_ms: 10000 are the coordinator's limits in "
            "cassandra.yaml (renamed read_request_timeout: 5000ms in 4.1). Queue-like tables with frequent DELETEs should use "
            "TimeWindowCompactionStrategy or be redesigned. Lowering gc_grace_seconds below the repair interval risks "
            "resurrected data, so run nodetool repair -pr on every node at least once within gc_grace_seconds. A full repair of "
            "a 1.2TB node takes 6 to 9 hours at the default stream_throughput_outbound of 24MiB/s.", 0.83),
    ], "database"),
    _r("cs2", "cass-ring-eu version, nodes, JDK and repair schedule", [
        hit("db-cass-inventory#chunk-2", "db-runbooks/inventory", "cass-ring-eu", "Inventory > Cassandra > cass-ring-eu",
            "cass-ring-eu runs Apache Cassandra 4.1.3 on JDK 11 (Temurin 11.0.21) with 12 nodes in two racks and RF 3 for "
            "keyspace orders (NetworkTopologyStrategy, dc eu-west). Reaper runs incremental repairs of orders every 7 days; the "
            "last full repair finished on 2025-03-28. Clients use the DataStax Java driver 4.17.0 with consistency "
            "LOCAL_QUORUM and a request timeout of 2s.", 0.78),
    ], "database"),
]
