"""Drafts for set `mysql` (MySQL replication lag, Chinese). See build.py for the format."""
SET = "mysql"
C1, C2 = "dba-mysql-repl#chunk-1", "dba-mysql-repl#chunk-2"
LIM = ["仅基于知识库检索结果与告警信息，未登录 db-orders-replica-2 查看实时复制状态。"]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "my-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Plain restatement: 1860, 300, MySQLReplicaLagHigh and the status fields are copied exactly from my1's query "
            "and chunk-1.",
     "analysis": [
         ("a1", "N", ["my1"], [],
          "db-orders-replica-2 的 Seconds_Behind_Source 为 1860，超过告警阈值 300，触发 MySQLReplicaLagHigh。手册要求先确认 "
          "Replica_IO_Running 与 Replica_SQL_Running 均为 Yes，再比较 Read_Source_Log_Pos 与 Exec_Source_Log_Pos。"),
     ],
     "conclusion": ("db-orders-replica-2 的复制延迟超过告警阈值，需要先判断是 IO 线程还是 SQL 线程落后。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "在 db-orders-replica-2 上执行 SHOW REPLICA STATUS\\G，记录 Read_Source_Log_Pos 与 "
                        "Exec_Source_Log_Pos 的变化。"),
     ],
     "limits": LIM},

    {"id": "my-02", "label": "G", "cat": "number-words", "uns": [],
     "why": "六十秒 = replica_net_timeout's 60 秒 and 三十秒 = source_heartbeat_period's 30 秒 (chunk-2): number words for "
            "stated values, each with its own key.",
     "analysis": [
         ("a1", "N", ["my1"], [],
          "网络层面，replica_net_timeout 默认六十秒，source_heartbeat_period 设为三十秒。IO 线程跟得上而 Exec_Source_Log_Pos "
          "长时间不动时，说明 SQL 线程在回放大事务，与网络无关。"),
     ],
     "conclusion": ("db-orders-replica-2 的延迟应先从 SQL 线程回放查起，网络超时参数不是重点。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "确认 replica_net_timeout 仍为默认的六十秒、source_heartbeat_period 为三十秒后，把排查重点放在 SQL 线程。"),
     ],
     "limits": LIM},

    {"id": "my-03", "label": "G", "cat": "key-unit", "uns": [],
     "why": "binlog_expire_logs_seconds = 604800 written as 604800 秒: the key name fixes the unit; 7 天 is stated beside it.",
     "analysis": [
         ("a1", "N", ["my1"], [C2],
          "手册说明 binlog_expire_logs_seconds = 604800 时，源库只保留 604800 秒（7 天）的 binlog；副本落后期间不要在源库执行 "
          "PURGE BINARY LOGS。"),
     ],
     "conclusion": ("副本追平之前应暂停源库的 binlog 清理，以免复制中断。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "db-orders-replica-2 追平前，不要在 db-orders-primary 上执行 PURGE BINARY LOGS。"),
     ],
     "limits": LIM},

    {"id": "my-04", "label": "G", "cat": "slash-list", "uns": [],
     "why": "p95/p99 and 120 秒/600 秒 are slash lists whose members are each stated in chunk-2 (\"p95 与 p99 面板分别在 120 秒"
            "与 600 秒告警\"); 1860 is in the query.",
     "analysis": [
         ("a1", "N", ["my1"], [],
          "复制延迟的 p95/p99 面板分别在 120 秒/600 秒告警；db-orders-replica-2 当前 Seconds_Behind_Source 为 1860，已高于 "
          "p99 面板的 600 秒告警线。"),
     ],
     "conclusion": ("db-orders-replica-2 的延迟已越过 p95/p99 面板的告警线。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "在 p95/p99 面板上确认延迟从何时开始上升，并与 MySQLReplicaLagHigh 的触发时间对照。"),
     ],
     "limits": LIM},

    {"id": "my-05", "label": "G", "cat": "range", "uns": [],
     "why": "70-80% (ASCII hyphen) where my2 says 70%~80%: both ends stated. 02:00, mysqldump and the parallel-replication "
            "keys are restated exactly.",
     "analysis": [
         ("a1", "N", ["my2"], [],
          "db-orders-replica-2 同时承担每日 02:00 的 mysqldump 全量备份与报表查询，备份期间 CPU 使用率为 70-80%。"),
         ("a2", "N", ["my1"], [],
          "SQL 线程落后时应开启并行复制：replica_parallel_workers = 16，replica_parallel_type = LOGICAL_CLOCK，"
          "replica_preserve_commit_order = ON。"),
     ],
     "conclusion": ("备份与报表查询占用 db-orders-replica-2 的 CPU，可能拖慢 SQL 线程回放。", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1", "a2"], "确认 MySQLReplicaLagHigh 的触发时间是否与 02:00 的 mysqldump 重叠。"),
         ("p2", ["a2"], "若 SQL 线程落后，设置 replica_parallel_workers = 16 与 replica_parallel_type = LOGICAL_CLOCK。"),
     ],
     "limits": LIM},

    {"id": "my-06", "label": "G", "cat": "quote-style", "uns": [],
     "why": "“大事务” is a short term of chunk-1 in Chinese quotes used as emphasis; the Last_SQL_Error line is quoted word for "
            "word; the negative item restates only its own query (24 小时, orders.order_items).",
     "analysis": [
         ("a1", "N", ["my1"], [],
          "IO 线程跟得上而 Exec_Source_Log_Pos 长时间不动，说明 SQL 线程在回放“大事务”：单个事务修改超过 100 万行或产生超过 1GB "
          "的 binlog 时，副本会在同一位置停留很久。"),
         ("a2", "NEG", ["my3"], [],
          "知识库没有返回 db-orders-primary 最近 24 小时针对 orders.order_items 的 DDL 变更记录。"),
     ],
     "conclusion": ("db-orders-replica-2 的延迟很可能来自“大事务”回放；是否有相关 DDL 无法从知识库确认。", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "检查 Last_SQL_Error 是否出现 “Could not execute Update_rows event on table orders.order_items; Can't "
                        "find record in 'order_items', Error_code: 1032”。"),
     ],
     "limits": LIM},

    {"id": "my-07", "label": "G", "cat": "query-fact", "uns": [],
     "why": "1860, 300 and 10.20.4.11:3306 are stated only in my1's query, which counts as evidence.",
     "analysis": [
         ("a1", "N", ["my1"], [],
          "告警 MySQLReplicaLagHigh：db-orders-replica-2 的 Seconds_Behind_Source 达到 1860，告警阈值为 300；源库是 "
          "db-orders-primary（10.20.4.11:3306）。"),
     ],
     "conclusion": ("db-orders-replica-2 明显落后于源库 db-orders-primary。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "登录 10.20.4.11:3306 上的 db-orders-primary，确认告警前后源库的写入是否突增。"),
     ],
     "limits": LIM},

    {"id": "my-08", "label": "G", "cat": "version-prefix", "uns": [],
     "why": "MySQL 8.0.35 written as v8.0.35 (leading v); 8.0.22, 10.20.4.13 and the commands are stated.",
     "analysis": [
         ("a1", "N", ["my2"], [],
          "订单库一主两从，均为 MySQL v8.0.35，binlog_format = ROW，gtid_mode = ON；db-orders-replica-2 的地址为 10.20.4.13。"),
         ("a2", "N", ["my1"], [],
          "8.0.22 之前的版本用 SHOW SLAVE STATUS 与 Seconds_Behind_Master，之后以 SHOW REPLICA STATUS\\G 中的 "
          "Seconds_Behind_Source 为准。"),
     ],
     "conclusion": ("v8.0.35 晚于 8.0.22，判断延迟应使用 SHOW REPLICA STATUS\\G 与 Seconds_Behind_Source。", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1", "a2"], "在 10.20.4.13 上执行 SHOW REPLICA STATUS\\G。"),
     ],
     "limits": LIM},

    {"id": "my-09", "label": "G", "cat": "fenced-code", "uns": [],
     "why": "A ```bash fence holding chunk-2's pt-query-digest command with <host> filled by the query's "
            "db-orders-replica-2.",
     "analysis": [
         ("a1", "N", ["my1"], [],
          "SQL 线程回放慢时需要分析 db-orders-replica-2 的慢日志，找出大事务；若确实是 SQL 线程落后，再开启并行复制。"),
     ],
     "conclusion": ("先定位拖慢回放的语句，再决定是否调整 replica_parallel_workers。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "分析慢日志：\n\n```bash\npt-query-digest /var/lib/mysql/db-orders-replica-2-slow.log "
                        "--since 1h\n```"),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "my-10", "label": "U", "cat": "partial-number", "uns": ["50"],
     "why": "max_user_connections is 500 in chunk-2; `50` (in a code span) is not stated anywhere in my1.",
     "analysis": [
         ("a1", "N", ["my1"], [],
          "源库 max_connections = 2000，其中 max_user_connections = `50` 留给业务账号；复制延迟与连接上限没有直接关系。"),
     ],
     "conclusion": ("连接数配置不是 db-orders-replica-2 延迟的原因。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "保持 max_connections = 2000 不变，把排查重点放在 SQL 线程回放。"),
     ],
     "limits": LIM},

    {"id": "my-11", "label": "U", "cat": "near-miss-identifier", "uns": ["max_connection"],
     "why": "max_connection is a near miss of the stated key max_connections (final s dropped).",
     "analysis": [
         ("a1", "N", ["my1"], [],
          "源库 max_connection = 2000，其中 max_user_connections = 500 留给业务账号；db-orders-replica-2 的延迟与连接上限无关。"),
     ],
     "conclusion": ("复制延迟需要从 SQL 线程回放查起。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "比较 Read_Source_Log_Pos 与 Exec_Source_Log_Pos，判断是哪个线程落后。"),
     ],
     "limits": LIM},

    {"id": "my-12", "label": "U", "cat": "unit-mismatch", "uns": ["60ms"],
     "why": "replica_net_timeout defaults to 60 秒 in chunk-2; 60ms is another unit, not stated.",
     "analysis": [
         ("a1", "N", ["my1"], [],
          "网络层面，replica_net_timeout 默认 60ms，source_heartbeat_period 设为 30 秒；IO 线程跟得上时，延迟与网络无关。"),
     ],
     "conclusion": ("db-orders-replica-2 的延迟不是网络超时造成的。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "确认 Replica_IO_Running 为 Yes 后，检查 Exec_Source_Log_Pos 是否长时间不动。"),
     ],
     "limits": LIM},

    {"id": "my-13", "label": "U", "cat": "neighbour-value", "uns": ["60 秒"],
     "why": "60 秒 is replica_net_timeout's value; chunk-2 sets source_heartbeat_period to 30 秒. The value is taken from the "
            "neighbouring key.",
     "analysis": [
         ("a1", "N", ["my1"], [],
          "source_heartbeat_period 设为 60 秒，用于在网络中断时发现断线；Replica_IO_Running 为 Yes 说明 IO 线程正常。"),
     ],
     "conclusion": ("网络与心跳配置不是 db-orders-replica-2 延迟的原因。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "比较 Read_Source_Log_Pos 与 Exec_Source_Log_Pos，确认落后的是 SQL 线程。"),
     ],
     "limits": LIM},

    {"id": "my-14", "label": "U", "cat": "disguise", "uns": ["9\u200b0 秒"],
     "why": "A zero-width space inside the number: it displays 90 秒, which my1 does not state (10, 120 秒, 600 秒 are stated).",
     "analysis": [
         ("a1", "N", ["my1"], [],
          "读流量可通过 ProxySQL 摘除：mysql_servers.max_replication_lag = 10（单位：秒），延迟超过该值的副本会被标记为 SHUNNED。"),
     ],
     "conclusion": ("db-orders-replica-2 延迟 1860，ProxySQL 应已把它标记为 SHUNNED。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "在 ProxySQL 中确认 mysql_servers.max_replication_lag = 10 已生效；延迟持续高于 9\u200b0 秒时暂停报表查询。"),
     ],
     "limits": LIM},

    {"id": "my-15", "label": "U", "cat": "invented-quote", "uns": ["MySQL 主从延迟排查手册"],
     "why": "The title in 《》 changes the words of the stated title 《MySQL 复制延迟排查》.",
     "analysis": [
         ("a1", "N", ["my1"], [],
          "按《MySQL 主从延迟排查手册》，先确认 Replica_IO_Running 与 Replica_SQL_Running 均为 Yes，再比较 Read_Source_Log_Pos "
          "与 Exec_Source_Log_Pos。"),
     ],
     "conclusion": ("db-orders-replica-2 需要先判断落后的是 IO 线程还是 SQL 线程。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "在 db-orders-replica-2 上执行 SHOW REPLICA STATUS\\G。"),
     ],
     "limits": LIM},

    {"id": "my-16", "label": "U", "cat": "other-citation", "uns": ["8.0.35"],
     "why": "a1 cites my1 only; 8.0.35 is stated in my2 (cited by a2, not by a1).",
     "analysis": [
         ("a1", "N", ["my1"], [],
          "8.0.22 之前的版本使用 SHOW SLAVE STATUS；db-orders-replica-2 运行 MySQL 8.0.35，应以 Seconds_Behind_Source 为准。"),
         ("a2", "N", ["my2"], [],
          "db-orders-replica-2 同时承担每日 02:00 的 mysqldump 全量备份与报表查询。"),
     ],
     "conclusion": ("延迟读数应取 Seconds_Behind_Source；备份与报表查询可能加重回放压力。", ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "确认延迟开始的时间是否与 02:00 的 mysqldump 重叠。"),
     ],
     "limits": LIM},

    {"id": "my-17", "label": "U", "cat": "derived", "uns": ["6.2 倍"],
     "why": "6.2 倍 (1860 / 300) is derived; the evidence states only 1860 and 300.",
     "analysis": [
         ("a1", "N", ["my1"], [],
          "db-orders-replica-2 的 Seconds_Behind_Source 为 1860，是告警阈值 300 的 6.2 倍。"),
     ],
     "conclusion": ("db-orders-replica-2 的延迟远超阈值。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "比较 Read_Source_Log_Pos 与 Exec_Source_Log_Pos，确认是否为 SQL 线程落后。"),
     ],
     "limits": LIM},

    {"id": "my-18", "label": "U", "cat": "negation", "uns": ["48"],
     "why": "'不要超过 48' still states 48, which my1 does not give (it gives replica_parallel_workers = 16).",
     "analysis": [
         ("a1", "N", ["my1"], [],
          "SQL 线程落后时开启并行复制：replica_parallel_workers = 16，replica_parallel_type = LOGICAL_CLOCK。"),
     ],
     "conclusion": ("db-orders-replica-2 应开启并行复制以加快回放。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "把 replica_parallel_workers 设为 16，之后即使仍有延迟也不要超过 48。"),
     ],
     "limits": LIM},
]
