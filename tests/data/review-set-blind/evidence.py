"""The eight evidence sets of the blind review set, as py-rag `raw-hits` records (SPEC 2).

One run per incident, 2-3 lookups (tool calls) per run. Each lookup's query names the incident's own
facts (service, host, alert value); the hits are runbook or inventory excerpts. A lookup with no hits
becomes a NO_EVIDENCE projection (cited only by NEGATIVE_OBSERVATION items).

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
    "ing": ("run-ing429-3318", "en", "ingress-nginx rate limiting (HTTP 429)"),
    "vmoom": ("run-vmoom-5527", "zh", "Linux OOM killer on a VM"),
    "pvc": ("run-pvc-6140", "en", "Kubernetes PVC stuck Pending"),
    "jdns": ("run-jdns-7702", "zh", "JVM DNS caching after a database VIP switch"),
    "mtls": ("run-mtls-2964", "en", "Istio mTLS handshake failures"),
    "vault": ("run-vault-4815", "zh", "Vault token expiry"),
    "lsq": ("run-lsq-9053", "en", "Logstash pipeline backpressure"),
    "ntp": ("run-ntp-1376", "zh", "clock skew on a VM (chrony)"),
}

# short call name -> (set, tool_call_id)
CALLS = {
    "ing1": ("ing", "call_ing_ratelimit"), "ing2": ("ing", "call_ing_inventory"), "ing3": ("ing", "call_ing_changes"),
    "vm1": ("vmoom", "call_vm_oomkill"), "vm2": ("vmoom", "call_vm_jvm"), "vm3": ("vmoom", "call_vm_cron"),
    "pvc1": ("pvc", "call_pvc_pending"), "pvc2": ("pvc", "call_pvc_statefulset"),
    "jd1": ("jdns", "call_jd_cache"), "jd2": ("jdns", "call_jd_resolver"), "jd3": ("jdns", "call_jd_change"),
    "mt1": ("mtls", "call_mt_handshake"), "mt2": ("mtls", "call_mt_inventory"),
    "va1": ("vault", "call_va_token"), "va2": ("vault", "call_va_agent"),
    "ls1": ("lsq", "call_ls_backpressure"), "ls2": ("lsq", "call_ls_bulk"), "ls3": ("lsq", "call_ls_disk"),
    "nt1": ("ntp", "call_nt_chrony"), "nt2": ("ntp", "call_nt_cmdb"),
}


def _r(call, query, hits, category):
    s, tcid = CALLS[call]
    return raw(SETS[s][0], tcid, query, hits, category)


RECORDS = [
    # ------------------------------------------------------------------ ing: ingress-nginx 429s (en)
    _r("ing1", "ingress-nginx returns HTTP 429 for Ingress checkout-web in namespace storefront, 429 ratio 12.5% "
               "(alert IngressHigh429Rate, threshold 5%), ingress class nginx-public, since 09:40 UTC", [
        hit("rb-ingress-ratelimit#chunk-1", "platform-runbooks/ingress", "ingress-nginx rate limiting",
            "Ingress > ingress-nginx > Rate limiting",
            "ingress-nginx answers 503 by default when a client exceeds a limit; the controller ConfigMap key "
            "limit-req-status-code: \"429\" makes it answer 429 Too Many Requests instead. Per-Ingress limits are "
            "annotations: nginx.ingress.kubernetes.io/limit-rps (requests per second per client IP), "
            "nginx.ingress.kubernetes.io/limit-rpm and nginx.ingress.kubernetes.io/limit-connections. The burst is "
            "limit-rps multiplied by nginx.ingress.kubernetes.io/limit-burst-multiplier (default 5), so limit-rps: \"20\" "
            "allows a burst of 100 requests. Every rejected request is logged by the controller at error level as "
            "\"limiting requests, excess: 100.520 by zone\" followed by the zone name.", 0.92),
        hit("rb-ingress-ratelimit#chunk-2", "platform-runbooks/ingress", "ingress-nginx rate limiting",
            "Ingress > ingress-nginx > Client address",
            "Limits are keyed on the client address as nginx sees it ($binary_remote_addr). Behind a cloud load "
            "balancer every request seems to come from the balancer's own addresses (for example 10.20.0.4 and "
            "10.20.0.5), so a limit of 20 rps is shared by all users. Set use-forwarded-headers: \"true\" in the "
            "ConfigMap ingress-nginx-controller (namespace ingress-nginx), or enable use-proxy-protocol: \"true\", and "
            "restrict the trusted sources with proxy-real-ip-cidr: \"10.20.0.0/16\". Exempt internal callers with "
            "nginx.ingress.kubernetes.io/limit-whitelist: \"10.0.0.0/8\". To raise a limit run kubectl -n <namespace> "
            "annotate ingress <ingress> nginx.ingress.kubernetes.io/limit-rps=\"50\" --overwrite; the controller "
            "reloads within about 2 seconds.", 0.85),
    ], "ingress"),
    _r("ing2", "ingress-nginx controller version and replicas for class nginx-public, cluster prod-eu-2", [
        hit("inv-prod-eu-2#chunk-4", "platform-inventory/clusters", "prod-eu-2 inventory", "Inventory > prod-eu-2 > Ingress",
            "prod-eu-2 runs ingress-nginx controller 1.9.4 (Helm chart 4.8.3) for the class nginx-public, behind an AWS "
            "NLB. The HPA keeps between 3 and 6 controller replicas (minReplicas: 3, maxReplicas: 6) at a target of 70% "
            "CPU. Controller pods expose metrics on port 10254; nginx_ingress_controller_requests{status=\"429\"} counts "
            "the rejected requests per Ingress.", 0.79),
    ], "inventory"),
    _r("ing3", "checkout-web Ingress annotation changes in the last 24h, namespace storefront", [], "change"),

    # ------------------------------------------------------------------ vmoom: Linux OOM killer on a VM (zh)
    _r("vm1", "虚拟机 report-vm-07（10.8.4.27）上的 java 进程被 OOM killer 杀死，内存 16 GiB，swap 0，告警 HostOomKillDetected "
              "于 02:17 触发", [
        hit("kb-linux-oom#chunk-1", "运维知识库/linux", "Linux OOM killer 排查", "Linux > 内存 > OOM killer",
            "内核无法再回收内存时触发 OOM killer，按 oom_score 选择进程终止。用 dmesg -T | grep -i \"killed process\" 或 "
            "journalctl -k --since \"1 hour ago\" 查看记录，典型日志为 \"Out of memory: Killed process 2143 (java) "
            "total-vm:18874368kB, anon-rss:15728640kB\"。/proc/<pid>/oom_score_adj 的取值范围是 -1000 到 1000，设为 -1000 "
            "可让进程免于被杀，但不建议对业务进程这样做。node_exporter 的 node_vmstat_oom_kill 计数增加即说明发生过 OOM kill。", 0.9),
        hit("kb-linux-oom#chunk-2", "运维知识库/linux", "Linux OOM killer 排查", "Linux > 内存 > 内核参数",
            "vm.overcommit_memory 默认 0（启发式），设为 2 时按 vm.overcommit_ratio（默认 50）严格限制可提交内存；vm.swappiness "
            "默认 60，数据库类主机常设为 10。vm.min_free_kbytes 建议为物理内存的 1%~3%，16 GiB 主机约 262144。把参数写入 "
            "/etc/sysctl.d/99-memory.conf 后执行 sysctl -p /etc/sysctl.d/99-memory.conf 生效；以上命令都需要 root 权限，普通用户"
            "请在命令前加 sudo。没有 swap 的主机上，匿名内存一旦超过可用内存就会直接触发 OOM。", 0.83),
    ], "linux"),
    _r("vm2", "report-vm-07 java 进程 -Xmx12g 堆外内存，报表服务 report-engine", [
        hit("kb-jvm-native#chunk-3", "运维知识库/jvm", "JVM 堆外内存排查", "JVM > 内存 > 堆外",
            "JVM 进程的常驻内存 = 堆（-Xmx）+ 元空间 + 线程栈 + 直接内存 + 代码缓存。-Xmx12g 的进程在 16 GiB 主机上只剩约 4 GiB "
            "留给堆外与系统。开启 -XX:NativeMemoryTracking=summary 后执行 jcmd <pid> VM.native_memory summary 查看各区域用量；"
            "-XX:MaxDirectMemorySize 未设置时等于 -Xmx。report-engine 3.2.0 起默认带 -XX:MaxDirectMemorySize=1g。建议堆不超过"
            "物理内存的 75%。", 0.8),
    ], "jvm"),
    _r("vm3", "report-vm-07 近 7 天 crontab 变更与夜间批处理任务", [], "change"),

    # ------------------------------------------------------------------ pvc: PVC stuck Pending (en)
    _r("pvc1", "PVC data-postgres-orders-0 Pending for 35m in namespace orders-db, StorageClass gp3-encrypted, event "
               "WaitForFirstConsumer, cluster prod-us-1", [
        hit("rb-pvc-pending#chunk-1", "platform-runbooks/storage", "PersistentVolumeClaim stuck in Pending",
            "Kubernetes > Storage > PVC Pending",
            "A claim stays Pending while no PersistentVolume can be bound or provisioned. Run kubectl describe pvc <pvc> "
            "-n <namespace> and read the Events. With volumeBindingMode: WaitForFirstConsumer the claim waits for a pod "
            "to be scheduled, and the event \"waiting for first consumer to be created before binding\" is normal until "
            "then. \"failed to provision volume with StorageClass\" points at the CSI driver: check kubectl logs -n "
            "kube-system deploy/ebs-csi-controller -c csi-provisioner. The EBS CSI driver creates gp3 volumes with 3000 "
            "IOPS and 125 MiB/s unless the StorageClass says otherwise; a volume lives in one availability zone "
            "(us-east-1a or us-east-1b in prod-us-1) and only a node in that zone can attach it.", 0.9),
        hit("rb-pvc-pending#chunk-2", "platform-runbooks/storage", "PersistentVolumeClaim stuck in Pending",
            "Kubernetes > Storage > Quotas and limits",
            "A namespace ResourceQuota with requests.storage: 500Gi or persistentvolumeclaims: \"10\" rejects claims "
            "beyond it with \"exceeded quota\". Most Nitro instance types can attach at most 28 EBS volumes (the limit is "
            "shared with network interfaces); once a node reaches it the scheduler reports \"node(s) exceed max volume "
            "count\" and the pod and its claim stay Pending. csi-provisioner waits 15s per provisioning attempt and "
            "retries with exponential back-off up to 5m. Reclaim policy Retain keeps the volume after the claim is "
            "deleted; Delete removes it.", 0.84),
    ], "kubernetes"),
    _r("pvc2", "StatefulSet postgres-orders volumeClaimTemplates storage 200Gi StorageClass gp3-encrypted KMS key", [
        hit("rb-statefulset-storage#chunk-2", "platform-runbooks/storage", "StatefulSet storage",
            "Kubernetes > StatefulSets > volumeClaimTemplates",
            "volumeClaimTemplates cannot be edited in place on Kubernetes 1.27; to grow a claim set allowVolumeExpansion: "
            "true on the StorageClass and patch each PVC. gp3-encrypted uses the KMS key alias/ebs-prod and the parameters "
            "type: gp3, encrypted: \"true\", iops: \"6000\", throughput: \"250\". A pod of postgres-orders with a claim of "
            "200Gi starts only on a node in the zone of its volume; the StatefulSet uses podManagementPolicy: "
            "OrderedReady, so postgres-orders-1 waits until postgres-orders-0 is Running and Ready.", 0.81),
    ], "kubernetes"),

    # ------------------------------------------------------------------ jdns: JVM DNS caching (zh)
    _r("jd1", "payment-gateway（Java 17）切换数据库 VIP 后仍连接旧地址 10.30.2.15:5432，新地址 10.30.2.41:5432，DNS 记录 "
              "db-primary.pay.internal TTL 30s", [
        hit("kb-java-dns#chunk-1", "运维知识库/java", "JVM 的 DNS 缓存", "Java > 网络 > DNS 缓存",
            "JVM 在 InetAddress 层自带 DNS 缓存，与操作系统的 nscd/systemd-resolved 无关。解析成功的结果缓存多久由安全属性 "
            "networkaddress.cache.ttl 决定：未安装安全管理器时默认 30 秒，安装了安全管理器时为永久缓存（-1）。解析失败的结果由 "
            "networkaddress.cache.negative.ttl 控制，默认 10 秒。可在 $JAVA_HOME/conf/security/java.security 中修改，或在启动"
            "参数中加 -Dsun.net.inetaddr.ttl=30 与 -Dsun.net.inetaddr.negative.ttl=0（旧属性，仅在未设置安全属性时生效）。", 0.89),
        hit("kb-java-dns#chunk-2", "运维知识库/java", "JVM 的 DNS 缓存", "Java > 网络 > 连接池",
            "即使 DNS 缓存已过期，连接池里的长连接仍指向旧地址：HikariCP 的 maxLifetime 默认 1800000 毫秒，应比数据库侧的连接"
            "超时至少短 30 秒；切换 VIP 后可通过 JMX 调用 softEvictConnections() 让连接逐个重建。排查时执行 jcmd <pid> "
            "VM.system_properties | grep inetaddr 确认实际生效的参数，并用 ss -tnp | grep <port> 查看连接的对端地址。", 0.82),
    ], "java"),
    _r("jd2", "payment-gateway 容器 /etc/resolv.conf ndots 解析 db-primary.pay.internal 慢", [
        hit("kb-resolv#chunk-4", "运维知识库/dns", "容器内的 DNS 解析配置", "DNS > 客户端 > resolv.conf",
            "Kubernetes 默认在 /etc/resolv.conf 写入 options ndots:5，search 域有 3 个（<namespace>.svc.cluster.local、"
            "svc.cluster.local、cluster.local），少于 5 个点的名字会先依次尝试 search 域，一次解析最多产生 8 次查询（A/AAAA "
            "各 4 次）。对内部全限定名可在末尾加点（db-primary.pay.internal.），或在 Pod 的 dnsConfig 中设置 ndots: \"2\"。"
            "NXDOMAIN 同样会被 JVM 按负缓存时间缓存；上游 CoreDNS 的 cache 插件默认最长缓存 3600 秒、负缓存 1800 秒。", 0.77),
    ], "dns"),
    _r("jd3", "db-primary.pay.internal 变更单 CHG-20240611-017 VIP 切换时间", [], "change"),

    # ------------------------------------------------------------------ mtls: Istio mTLS handshake failures (en)
    _r("mt1", "orders-api -> inventory-grpc 503 UF,URX upstream connect error, TLS error "
              "CERTIFICATE_VERIFY_FAILED, namespace retail, since 2024-06-11 14:05 UTC", [
        hit("kb-istio-mtls#chunk-2", "mesh-runbooks/istio", "mTLS handshake failures", "Istio > Security > mTLS troubleshooting",
            "A 503 with response flags UF,URX and \"upstream connect error or disconnect/reset before headers. reset "
            "reason: connection failure, transport failure reason: TLS error\" means the client sidecar could not "
            "complete the mTLS handshake. Common causes: a PeerAuthentication in STRICT mode while the client has no "
            "sidecar (its namespace lacks istio-injection=enabled), a DestinationRule with tls.mode: DISABLE overriding "
            "ISTIO_MUTUAL, or a workload certificate signed by another root. Check with istioctl proxy-config secret "
            "<pod> -n <namespace> and istioctl x describe pod <pod> -n <namespace>. Workload certificates live 24h and "
            "are rotated at about 80% of their lifetime by istiod; a sidecar that cannot reach istiod on port 15012 "
            "keeps serving an expiring certificate.", 0.9),
        hit("kb-istio-mtls#chunk-3", "mesh-runbooks/istio", "mTLS handshake failures", "Istio > Security > Root of trust",
            "When istiod restarts with a new cacerts secret (ca-cert.pem, ca-key.pem, root-cert.pem and cert-chain.pem "
            "in istio-system), workloads that still hold certificates from the old root fail with "
            "CERTIFICATE_VERIFY_FAILED until their sidecars restart. Roll them with kubectl rollout restart "
            "deployment/<deployment> -n <namespace>; for a gradual change keep both roots in root-cert.pem for at least "
            "48h. PERMISSIVE mode accepts both plaintext and mTLS during a migration.", 0.84),
    ], "mesh"),
    _r("mt2", "retail mesh Istio version, istiod revision 1-20-3, inventory-grpc port 9090", [
        hit("inv-mesh-prod#chunk-1", "platform-inventory/mesh", "Mesh inventory prod", "Inventory > Mesh > Istio",
            "Control plane: Istio 1.20.3 (revision 1-20-3), istiod with 2 replicas in istio-system; proxies run Envoy "
            "1.28.1. The retail namespace has had PeerAuthentication default in STRICT mode since 2024-05-27. "
            "inventory-grpc serves gRPC on port 9090 (Service port name grpc-inventory); orders-api calls it as "
            "inventory-grpc.retail.svc.cluster.local:9090. Sidecar resources: 100m CPU / 128Mi memory requested, "
            "2000m / 1Gi limit.", 0.78),
    ], "inventory"),

    # ------------------------------------------------------------------ vault: Vault token expiry (zh)
    _r("va1", "billing-worker 调用 Vault 报 403 permission denied，token 创建于 2024-05-02，role billing-worker，认证方式 "
              "kubernetes，Vault 地址 https://vault.internal:8200", [
        hit("kb-vault-token#chunk-1", "安全知识库/vault", "Vault token 过期排查", "Vault > 认证 > Token 生命周期",
            "Vault 返回 403 且响应体为 {\"errors\":[\"permission denied\"]} 时，常见原因是 token 已过期或已被吊销，而不一定是"
            "策略不足。用 vault token lookup 查看 ttl、expire_time 与 renewable；token 的 TTL 不能超过 max_ttl，系统默认 "
            "default_lease_ttl 与 max_lease_ttl 均为 768h。到达 max_ttl 后续期（vault token renew）也无效，只能重新登录："
            "vault write auth/kubernetes/login role=<role> jwt=@/var/run/secrets/kubernetes.io/serviceaccount/token。执行前"
            "先设置环境变量 VAULT_ADDR 与 VAULT_NAMESPACE。", 0.88),
        hit("kb-vault-token#chunk-2", "安全知识库/vault", "Vault token 过期排查", "Vault > 认证 > Kubernetes 角色",
            "Kubernetes 认证角色的 token_ttl 建议 1h、token_max_ttl 建议 24h，由 Vault Agent 的 auto_auth 自动续期；Agent 在 "
            "TTL 剩余约 1/3 时续期。写入角色：vault write auth/kubernetes/role/<role> bound_service_account_names=<sa> "
            "bound_service_account_namespaces=<namespace> token_policies=<policy> token_ttl=1h token_max_ttl=24h。续期失败时 "
            "Agent 日志为 \"error renewing token: Error making API request. Code: 403. Errors: * permission denied\"。", 0.83),
    ], "security"),
    _r("va2", "billing-worker Vault Agent sidecar 版本，命名空间 billing，serviceaccount billing-worker-sa，策略 billing-read", [
        hit("kb-vault-agent#chunk-2", "安全知识库/vault", "Vault Agent 注入", "Vault > Agent > 注入器",
            "注入器根据注解 vault.hashicorp.com/agent-inject: \"true\" 与 vault.hashicorp.com/role: \"<role>\" 为 Pod 加入 "
            "vault-agent 容器，镜像为 hashicorp/vault:1.15.4。设置 vault.hashicorp.com/agent-pre-populate-only: \"true\" 时"
            "只有 init 容器，不会续期，token 到期后应用会持续收到 403。Agent 默认把 token 写到 /home/vault/.vault-token，把"
            "渲染出的密钥写到 /vault/secrets/<name>。集群的 Vault 服务端版本为 1.15.6，3 节点 Raft 存储。", 0.8),
    ], "security"),

    # ------------------------------------------------------------------ lsq: Logstash backpressure (en)
    _r("ls1", "logstash-ingest-02 pipeline main backpressure, filebeat retrying, persisted queue at 92% of 8gb, events in "
              "18k/s vs out 6k/s", [
        hit("kb-logstash-pq#chunk-1", "observability-runbooks/logstash", "Logstash pipeline backpressure",
            "Logstash > Pipelines > Backpressure",
            "When outputs are slower than inputs, the queue fills and Logstash stops accepting events; Beats clients then "
            "log \"Failed to publish events caused by: read tcp i/o timeout\" and retry with back-off. With queue.type: "
            "persisted the pipeline buffers to disk up to queue.max_bytes (default 1024mb) under path.queue (default "
            "/var/lib/logstash/queue); once the queue is full, backpressure reaches the inputs. Check GET "
            "http://localhost:9600/_node/stats/pipelines?pretty and compare events.in with events.out per pipeline, and "
            "queue.queue_size_in_bytes with queue.max_queue_size_in_bytes. A flow metric worker_concurrency close to "
            "pipeline.workers means every worker is busy.", 0.91),
        hit("kb-logstash-pq#chunk-2", "observability-runbooks/logstash", "Logstash pipeline backpressure",
            "Logstash > Pipelines > Tuning",
            "pipeline.workers defaults to the number of CPU cores and pipeline.batch.size to 125; raising the batch from "
            "125 to 250 or 500 helps when the output is an Elasticsearch bulk request. pipeline.batch.delay is 50 ms. "
            "Give the JVM a heap of 4g to 8g (-Xms and -Xmx equal, in config/jvm.options); above 8g GC pauses grow. A slow "
            "filter shows in the per-plugin duration_in_millis; grok patterns with unanchored regular expressions are the "
            "usual cause, and timeout_millis (default 30000) stops a runaway match. On Windows hosts the settings are in "
            "C:\\logstash\\config\\logstash.yml and the pipelines in C:\\logstash\\config\\pipelines.yml.", 0.86),
    ], "logging"),
    _r("ls2", "logstash-ingest-02 elasticsearch output to es-logs-prod, bulk rejections 429 es_rejected_execution_exception", [
        hit("kb-es-bulk#chunk-3", "observability-runbooks/elasticsearch", "Bulk rejections", "Elasticsearch > Indexing > Bulk rejections",
            "Elasticsearch answers a bulk request with HTTP 429 and es_rejected_execution_exception when the queue of the "
            "write thread pool (thread_pool.write.queue_size, default 10000) is full. The Logstash elasticsearch output "
            "retries 429 responses without limit, starting at retry_initial_interval 2s and doubling up to "
            "retry_max_interval 64s, so rejections show up upstream as backpressure, not as lost events. Check GET "
            "_cat/thread_pool/write?v&h=node_name,active,queue,rejected. es-logs-prod runs Elasticsearch 8.11.1 on 6 data "
            "nodes (es-logs-data-0 to es-logs-data-5) with 16 vCPU each.", 0.82),
    ], "logging"),
    _r("ls3", "logstash-ingest-02 disk IOPS of /var/lib/logstash/queue since 09:40 UTC", [], "metrics"),

    # ------------------------------------------------------------------ ntp: clock skew (zh)
    _r("nt1", "主机 kafka-broker-3（192.168.12.33）时钟偏移 +4.7s，告警 NodeClockSkewDetected 阈值 0.05s，chronyd 运行中", [
        hit("kb-chrony#chunk-1", "运维知识库/linux", "时钟漂移与 chrony 排查", "Linux > 时间同步 > chrony",
            "先执行 chronyc tracking 查看 System time 与 Last offset，再执行 chronyc sources -v 确认有没有状态为 ^* 的可用时间源。"
            "Reach 为八进制，377 表示最近 8 次轮询全部成功。node_exporter 的 node_timex_offset_seconds 绝对值超过 0.05 持续 "
            "10m 时触发 NodeClockSkewDetected。chronyd 默认只在启动后的前 3 次更新中允许跳变（配置 makestep 1.0 3），之后只做"
            "渐进调整，速度受 maxslewrate 限制（默认 83333.333 ppm）；偏移达到数秒时手动执行 chronyc makestep 立即校正。配置文件"
            "为 /etc/chrony.conf（Debian 系为 /etc/chrony/chrony.conf），时间源写法为 server ntp1.corp.local iburst 与 server "
            "ntp2.corp.local iburst。", 0.9),
        hit("kb-chrony#chunk-2", "运维知识库/linux", "时钟漂移与 chrony 排查", "Linux > 时间同步 > 影响",
            "时钟偏移对分布式系统的影响：Kerberos 默认容忍 5 分钟偏差；etcd 与 ZooKeeper 对偏移敏感；Kafka 按时间戳做日志保留，"
            "log.retention.hours 默认 168。偏移越过证书有效期边界时 TLS 校验失败，报错 \"x509: certificate has expired or is "
            "not yet valid\"。虚拟机在宿主机迁移或挂起恢复后最容易出现数秒偏移，VMware 环境应关闭 tools.syncTime，以免与 chrony "
            "冲突。防火墙需放行 UDP 123 端口。", 0.81),
    ], "linux"),
    _r("nt2", "kafka-broker-3 操作系统与 chrony 版本，NTP 服务器", [
        hit("cmdb-hosts#chunk-7", "CMDB/主机", "kafka 集群主机清单", "CMDB > 中间件 > kafka-prod",
            "kafka-broker-1 至 kafka-broker-5 为 VMware 虚拟机，操作系统 Rocky Linux 8.9，chrony 4.2，内核 "
            "4.18.0-513.el8。NTP 服务器为 ntp1.corp.local（10.0.0.11）与 ntp2.corp.local（10.0.0.12）。kafka-broker-3 于 "
            "2024-06-10 22:30 因宿主机维护做过 vMotion 迁移。", 0.76),
    ], "cmdb"),
]
