"""Drafts for set `vault` (Vault token expiry, Chinese). See build.py for the format."""
SET = "vault"
V1, V2 = "kb-vault-token#chunk-1", "kb-vault-token#chunk-2"
LIM = ["仅基于知识库检索结果与告警信息，未实际执行 vault token lookup。"]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "va-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Service, address, 403, the creation date, role, auth method, the two lease keys with 768h and the commands "
            "are restated from va1 (query and excerpt), in bullets and bold.",
     "analysis": [
         ("a1", "N", ["va1"], [V1],
          "- billing-worker 调用 Vault（https://vault.internal:8200）返回 **403 permission denied**，token 创建于 "
          "2024-05-02，role 为 billing-worker，认证方式 kubernetes；\n"
          "- 手册指出 403 的常见原因是 token 已过期或已被吊销，而不一定是策略不足；\n"
          "- 系统默认 default_lease_ttl 与 max_lease_ttl 均为 768h，到达 max_ttl 后 vault token renew 也无效。"),
     ],
     "conclusion": ("billing-worker 的 token 很可能已到 max_ttl，只能重新登录。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "用 vault token lookup 查看 ttl、expire_time 与 renewable。"),
     ],
     "limits": LIM},

    {"id": "va-02", "label": "G", "cat": "json-snippet", "uns": [],
     "why": "The JSON body is quoted exactly as the excerpt gives it, once in a code span and once in a json fence; 403 "
            "is stated.",
     "analysis": [
         ("a1", "N", ["va1"], [],
          "billing-worker 收到的 403 对应手册中的响应体 `{\"errors\":[\"permission denied\"]}`；按手册，这通常意味着 token "
          "已过期或已被吊销，而不一定是策略不足。"),
     ],
     "conclusion": ("先确认 token 状态，再考虑策略。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "若 Vault 的响应体为\n```json\n{\"errors\":[\"permission denied\"]}\n```\n就先执行 vault token "
                        "lookup 查看 expire_time。"),
     ],
     "limits": LIM},

    {"id": "va-03", "label": "G", "cat": "env-var", "uns": [],
     "why": "$VAULT_ADDR and ${VAULT_NAMESPACE} are the stated VAULT_ADDR and VAULT_NAMESPACE in shell syntax; the "
            "address is the query's; the login command is the excerpt's with <role> filled from the query.",
     "analysis": [
         ("a1", "N", ["va1"], [],
          "到达 max_ttl 后续期也无效，只能重新登录；登录前先设置 `$VAULT_ADDR`（https://vault.internal:8200）与 "
          "`${VAULT_NAMESPACE}`。"),
     ],
     "conclusion": ("billing-worker 需要重新登录 Vault 获取新 token。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "```bash\nvault write auth/kubernetes/login role=billing-worker "
                        "jwt=@/var/run/secrets/kubernetes.io/serviceaccount/token\n```"),
     ],
     "limits": LIM},

    {"id": "va-04", "label": "G", "cat": "units", "uns": [],
     "why": "768h → 768 小时, 1h → 1 小时, 24h → 24 小时: the same values in the same unit.",
     "analysis": [
         ("a1", "N", ["va1"], [],
          "系统默认 max_lease_ttl 为 768 小时；Kubernetes 认证角色的 token_ttl 建议 1 小时、token_max_ttl 建议 24 小时，"
          "由 Vault Agent 的 auto_auth 自动续期。"),
     ],
     "conclusion": ("billing-worker 的 token 若没有 Agent 续期，最多 768 小时后必然失效。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "把 billing-worker 角色的 token_ttl 设为 1 小时、token_max_ttl 设为 24 小时，交给 Agent 续期。"),
     ],
     "limits": LIM},

    {"id": "va-05", "label": "G", "cat": "placeholder-filled", "uns": [],
     "why": "vault write auth/kubernetes/role/<role> bound_service_account_names=<sa> bound_service_account_namespaces="
            "<namespace> token_policies=<policy> ... filled with billing-worker (va1 query), billing-worker-sa, billing and "
            "billing-read (va2 query); a1 cites both calls; 1h and 24h stated.",
     "analysis": [
         ("a1", "N", ["va1", "va2"], [],
          "billing-worker 的 serviceaccount 为 billing-worker-sa，命名空间 billing，策略 billing-read；角色的 token_ttl 建议 "
          "1h、token_max_ttl 建议 24h。"),
     ],
     "conclusion": ("billing-worker 角色需要按手册的建议值重新写入。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "`vault write auth/kubernetes/role/billing-worker bound_service_account_names=billing-worker-sa "
                        "bound_service_account_namespaces=billing token_policies=billing-read token_ttl=1h "
                        "token_max_ttl=24h`"),
     ],
     "limits": LIM},

    {"id": "va-06", "label": "G", "cat": "number-words", "uns": [],
     "why": "三分之一 = 1/3, 一小时 = 1h, 二十四小时 = 24h: Chinese number words for stated values.",
     "analysis": [
         ("a1", "N", ["va1"], [V2],
          "Vault Agent 在 TTL 剩余约三分之一时续期；Kubernetes 认证角色的 token_ttl 建议一小时、token_max_ttl 建议二十四小时。"),
     ],
     "conclusion": ("只要 Agent 正常运行，billing-worker 的 token 不会在使用中过期。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "在 Agent 日志中搜索 error renewing token，确认续期是否失败。"),
     ],
     "limits": LIM},

    {"id": "va-07", "label": "G", "cat": "version-prefix", "uns": [],
     "why": "v1.15.4 and v1.15.6 are the stated 1.15.4 and 1.15.6 with a leading v; 三节点 is the stated 3 节点 as a number "
            "word; the annotation with its value and 403 are restated.",
     "analysis": [
         ("a1", "N", ["va2"], [],
          "注入的 vault-agent 容器镜像为 hashicorp/vault:1.15.4（Agent v1.15.4），服务端为 v1.15.6，三节点 Raft 存储。若设置了 "
          "vault.hashicorp.com/agent-pre-populate-only: \"true\"，只有 init 容器，不会续期，token 到期后应用会持续收到 403。"),
     ],
     "conclusion": ("需要确认 billing-worker 的 Pod 是否只有 init 容器。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "检查 billing-worker 的 Pod 注解中 vault.hashicorp.com/agent-pre-populate-only 的取值。"),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "va-08", "label": "U", "cat": "derived", "uns": ["2024-06-03"],
     "why": "2024-06-03 (2024-05-02 + 768h) is a derived date; the evidence states only the creation date and 768h.",
     "analysis": [
         ("a1", "N", ["va1"], [],
          "token 创建于 2024-05-02，默认 max_lease_ttl 为 768h，因此已在 2024-06-03 到达上限，此后续期无效。"),
     ],
     "conclusion": ("billing-worker 的 token 已过期。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "用 vault token lookup 核对 expire_time。"),
     ],
     "limits": LIM},

    {"id": "va-09", "label": "U", "cat": "conversion", "uns": ["32 天"],
     "why": "768h converted to 32 天; the evidence does not state it.",
     "analysis": [
         ("a1", "N", ["va1"], [],
          "系统默认 default_lease_ttl 与 max_lease_ttl 均为 32 天，token 创建于 2024-05-02，到达 max_ttl 后续期也无效。"),
     ],
     "conclusion": ("billing-worker 的 token 可能已达到最长有效期。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "重新登录：vault write auth/kubernetes/login role=billing-worker "
                        "jwt=@/var/run/secrets/kubernetes.io/serviceaccount/token"),
     ],
     "limits": LIM},

    {"id": "va-10", "label": "U", "cat": "near-miss-identifier", "uns": ["bound_service_account_name"],
     "why": "bound_service_account_name drops the final s of the stated bound_service_account_names (a piece of a longer "
            "stated identifier: a near miss).",
     "analysis": [
         ("a1", "N", ["va1", "va2"], [],
          "billing-worker 的 serviceaccount 为 billing-worker-sa，命名空间 billing；角色写入时需要绑定它们。"),
     ],
     "conclusion": ("角色绑定错误也会导致登录失败。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "确认角色 billing-worker 的 bound_service_account_name 为 billing-worker-sa。"),
     ],
     "limits": LIM},

    {"id": "va-11", "label": "U", "cat": "invented-quote", "uns": ["Error making API request. Code: 403. Errors: * token expired"],
     "why": "The quoted log line changes the evidence's words ('permission denied' becomes 'token expired').",
     "analysis": [
         ("a1", "N", ["va1"], [],
          "续期失败时 Agent 日志中会出现 “Error making API request. Code: 403. Errors: * token expired”，之后 billing-worker "
          "的请求持续返回 403。"),
     ],
     "conclusion": ("billing-worker 的 token 续期失败。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "用 vault token lookup 查看 renewable 与 expire_time。"),
     ],
     "limits": LIM},

    {"id": "va-12", "label": "U", "cat": "wrong-version", "uns": ["1.16"],
     "why": "'升级到 Vault 1.16' recommends a version the evidence does not give (it states 1.15.4 and 1.15.6).",
     "analysis": [
         ("a1", "N", ["va2"], [],
          "vault-agent 容器镜像为 hashicorp/vault:1.15.4，服务端版本为 1.15.6。"),
     ],
     "conclusion": ("Agent 与服务端版本不一致。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "事后把 Agent 与服务端统一升级到 Vault 1.16。"),
     ],
     "limits": LIM},

    {"id": "va-13", "label": "U", "cat": "disguise", "uns": ["1\u200b2h"],
     "why": "A zero-width space inside the value: it displays 12h, which the evidence does not state (it gives 1h, 24h, "
            "768h).",
     "analysis": [
         ("a1", "N", ["va1"], [V2],
          "Kubernetes 认证角色的 token_ttl 建议 1h、token_max_ttl 建议 24h，由 Vault Agent 自动续期。"),
     ],
     "conclusion": ("billing-worker 的角色应由 Agent 续期。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "把 billing-worker 角色的 token_max_ttl 暂时放宽到 1\u200b2h，观察 403 是否消失。"),
     ],
     "limits": LIM},

    {"id": "va-14", "label": "U", "cat": "negation", "uns": ["72h"],
     "why": "'不要超过 72h' still states 72h, which the evidence does not give.",
     "analysis": [
         ("a1", "N", ["va1"], [V2],
          "Kubernetes 认证角色的 token_ttl 建议 1h、token_max_ttl 建议 24h。"),
     ],
     "conclusion": ("billing-worker 的 token 生命周期应交给 Agent 管理。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "token_max_ttl 按建议设为 24h，任何情况下都不要超过 72h。"),
     ],
     "limits": LIM},

    {"id": "va-15", "label": "U", "cat": "other-citation", "uns": ["/home/vault/.vault-token"],
     "why": "a1 cites va1 only; /home/vault/.vault-token is stated in va2, which a1 does not cite.",
     "analysis": [
         ("a1", "N", ["va1"], [],
          "vault token lookup 可以查看 /home/vault/.vault-token 中 token 的 ttl、expire_time 与 renewable。"),
         ("a2", "N", ["va2"], [],
          "设置 vault.hashicorp.com/agent-pre-populate-only: \"true\" 时只有 init 容器，不会续期。"),
     ],
     "conclusion": ("billing-worker 的 token 可能因未续期而过期。", ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "检查 billing-worker 的 Pod 是否只有 init 容器。"),
     ],
     "limits": LIM},
]
