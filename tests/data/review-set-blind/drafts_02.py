"""Drafts for set `vmoom` (Linux OOM killer on a VM, Chinese). See build.py for the format."""
SET = "vmoom"
K1, K2 = "kb-linux-oom#chunk-1", "kb-linux-oom#chunk-2"
LIM = ["仅基于知识库检索结果与告警信息，未登录 report-vm-07 查看实际的内存曲线。"]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "vm-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Host, address, 02:17, the alert, 16 GiB, swap 0, the log line and the dmesg command are restated exactly from "
            "vm1 (query and excerpts), in bullets, bold and code spans; the negative item restates its own query (7 天); "
            "p2 is based on a1 and a2, so 02:17 is in its evidence.",
     "analysis": [
         ("a1", "N", ["vm1"], [],
          "告警与手册要点：\n- 虚拟机 **report-vm-07**（10.8.4.27）于 02:17 触发 HostOomKillDetected，java 进程被 OOM killer "
          "杀死；\n- 主机内存 16 GiB，swap 为 0，匿名内存一旦超过可用内存就会直接触发 OOM；\n- 手册中的典型日志为 "
          "`Out of memory: Killed process 2143 (java) total-vm:18874368kB, anon-rss:15728640kB`。"),
         ("a2", "NEG", ["vm3"], [],
          "知识库中没有 report-vm-07 近 7 天的 crontab 变更或夜间批处理任务记录。"),
     ],
     "conclusion": ("report-vm-07 在没有 swap 的情况下内存耗尽，内核的 OOM killer 选中了 java 进程。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 `dmesg -T | grep -i \"killed process\"` 确认被杀进程与时间。"),
         ("p2", ["a1", "a2"], "人工核对 report-vm-07 的 crontab，确认 02:17 前后是否有批处理任务在运行。"),
     ],
     "limits": LIM},

    {"id": "vm-02", "label": "G", "cat": "fullwidth-digits", "uns": [],
     "why": "１６ and ２６２１４４ are full-width digits that display the stated 16 and 262144 (LABELS.md: a disguised "
            "specific is judged by what it displays, grounded when that is stated); 1%~3% and the path are restated.",
     "analysis": [
         ("a1", "N", ["vm1"], [],
          "report-vm-07 内存为 １６ GiB 且没有 swap；按手册，vm.min_free_kbytes 建议为物理内存的 1%~3%，１６ GiB 主机约 "
          "２６２１４４。"),
     ],
     "conclusion": ("在无 swap 的 １６ GiB 主机上，可用内存一旦耗尽就会直接触发 OOM。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "把 vm.min_free_kbytes 写入 /etc/sysctl.d/99-memory.conf，再执行 `sysctl -p "
                        "/etc/sysctl.d/99-memory.conf` 生效。"),
     ],
     "limits": LIM},

    {"id": "vm-03", "label": "G", "cat": "range", "uns": [],
     "why": "-1000~1000 is the stated range '-1000 到 1000' (both ends stated); '1 %–3 %' (spaces, en dash) is the stated "
            "1%~3%; -1000 as a value is stated.",
     "analysis": [
         ("a1", "N", ["vm1"], [],
          "/proc/<pid>/oom_score_adj 的取值范围为 -1000~1000，设为 -1000 可让进程免于被杀，但手册不建议对业务进程这样做。"
          "vm.min_free_kbytes 建议取物理内存的 1 %–3 %。"),
     ],
     "conclusion": ("保护 java 进程不是办法，report-vm-07 需要从内存用量本身入手。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "不要把 java 进程的 /proc/<pid>/oom_score_adj 设为 -1000；先查清楚内存被谁占用。"),
     ],
     "limits": LIM},

    {"id": "vm-04", "label": "G", "cat": "code-block", "uns": [],
     "why": "sudo is stated in the excerpt ('普通用户请在命令前加 sudo', chunk-2, which a1 cites; p1 is based on a1 and a2); "
            "the commands, path and values are the evidence's, in fenced blocks with a language tag.",
     "analysis": [
         ("a1", "N", ["vm1"], [K2],
          "vm.swappiness 默认 60，数据库类主机常设为 10；vm.overcommit_memory 默认 0，设为 2 时按 vm.overcommit_ratio（默认 "
          "50）严格限制可提交内存。report-vm-07 没有 swap，调这些参数之前要先确认 java 进程的实际用量。"),
         ("a2", "N", ["vm1"], [K1],
          "OOM kill 的记录可以用 dmesg 或 journalctl -k 查到。"),
     ],
     "conclusion": ("report-vm-07 的内核参数可以调整，但前提是先确认 OOM 的直接原因。", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1", "a2"], "确认被杀记录（需要 root 权限，普通用户加 sudo）：\n```bash\nsudo dmesg -T | grep -i \"killed process\"\n"
                        "sudo journalctl -k --since \"1 hour ago\"\n```"),
         ("p2", ["a1"], "参数写入 /etc/sysctl.d/99-memory.conf 后执行：\n```bash\nsudo sysctl -p /etc/sysctl.d/99-memory.conf\n```"),
     ],
     "limits": LIM},

    {"id": "vm-05", "label": "G", "cat": "number-words", "uns": [],
     "why": "六十 = 60, 十 = 10, 五十 = 50: Chinese number words for the stated values of vm.swappiness and "
            "vm.overcommit_ratio; 16 GiB, 0 and 2 are restated.",
     "analysis": [
         ("a1", "N", ["vm1"], [],
          "vm.swappiness 默认为六十，数据库类主机常设为十；vm.overcommit_memory 默认 0，设为 2 时按 vm.overcommit_ratio（默认"
          "五十）严格限制可提交内存。report-vm-07 内存 16 GiB，没有 swap。"),
     ],
     "conclusion": ("没有 swap 时 vm.swappiness 起不到缓冲作用，java 进程的用量才是关键。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "若要收紧内存提交，可评估把 vm.overcommit_memory 设为 2，并保留 vm.overcommit_ratio 默认的五十。"),
     ],
     "limits": LIM},

    {"id": "vm-06", "label": "G", "cat": "quote-style", "uns": [],
     "why": "「Out of memory: Killed process 2143 (java)」 is a word-for-word part of the quoted log line; “OOM kill” and "
            "“killed process” are the excerpt's own words, in curly quotes.",
     "analysis": [
         ("a1", "N", ["vm1"], [],
          "dmesg 中应能看到「Out of memory: Killed process 2143 (java)」这样的记录；node_exporter 的 node_vmstat_oom_kill "
          "计数增加也说明发生过 “OOM kill”。"),
     ],
     "conclusion": ("report-vm-07 上的 java 进程是被内核 OOM killer 终止的，不是自行退出。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "用 dmesg -T 搜索 “killed process”，核对被杀时间是否为 02:17。"),
     ],
     "limits": LIM},

    {"id": "vm-07", "label": "G", "cat": "approx-marker", "uns": [],
     "why": "'~4 GiB' and '≈4 GiB' restate the excerpt's '约 4 GiB'; -Xmx12g, 16 GiB, 3.2.0, the flags and the jcmd "
            "command are restated.",
     "analysis": [
         ("a1", "N", ["vm2"], [],
          "-Xmx12g 的 java 进程在 16 GiB 主机上只剩 ~4 GiB 留给堆外与系统；-XX:MaxDirectMemorySize 未设置时等于 -Xmx，"
          "report-engine 3.2.0 起默认带 -XX:MaxDirectMemorySize=1g。"),
     ],
     "conclusion": ("堆外只有 ≈4 GiB，直接内存、元空间与线程栈叠加后很容易耗尽 report-vm-07 的内存。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "开启 -XX:NativeMemoryTracking=summary，再执行 `jcmd <pid> VM.native_memory summary` 查看各区域用量。"),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "vm-08", "label": "U", "cat": "derived", "uns": ["94%"],
     "why": "94% (anon-rss 15728640kB / 16 GiB) is derived; the evidence states only the two values.",
     "analysis": [
         ("a1", "N", ["vm1"], [],
          "日志中的 anon-rss:15728640kB 已占 16 GiB 物理内存的 94%，且 swap 为 0，内存耗尽后 OOM killer 选中了 java 进程。"),
     ],
     "conclusion": ("report-vm-07 的内存几乎全部被 java 进程占用。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "执行 dmesg -T | grep -i \"killed process\" 确认被杀进程。"),
     ],
     "limits": LIM},

    {"id": "vm-09", "label": "U", "cat": "conversion", "uns": ["15 GiB"],
     "why": "15 GiB converts anon-rss:15728640kB to another unit; the evidence does not state it.",
     "analysis": [
         ("a1", "N", ["vm1"], [],
          "被杀的 java 进程 anon-rss:15728640kB，也就是 15 GiB，已接近主机的 16 GiB 内存，而主机没有 swap。"),
     ],
     "conclusion": ("java 进程的匿名内存几乎占满了 report-vm-07。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "用 journalctl -k --since \"1 hour ago\" 查看内核记录。"),
     ],
     "limits": LIM},

    {"id": "vm-10", "label": "U", "cat": "rounded", "uns": ["260000"],
     "why": "The excerpt says 约 262144; 260000 is a rounded value it does not state.",
     "analysis": [
         ("a1", "N", ["vm1"], [],
          "vm.min_free_kbytes 建议为物理内存的 1%~3%，16 GiB 主机约 260000；report-vm-07 正是 16 GiB 且没有 swap。"),
     ],
     "conclusion": ("report-vm-07 的内核保留内存值得一并检查。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "把 vm.min_free_kbytes 写入 /etc/sysctl.d/99-memory.conf 后执行 sysctl -p /etc/sysctl.d/99-memory.conf。"),
     ],
     "limits": LIM},

    {"id": "vm-11", "label": "U", "cat": "near-miss-identifier", "uns": ["vm.swapiness"],
     "why": "vm.swapiness drops one p from the stated key vm.swappiness (a near miss).",
     "analysis": [
         ("a1", "N", ["vm1"], [],
          "report-vm-07 没有 swap；数据库类主机常把 vm.swapiness 设为 10，默认为 60，但没有 swap 时这个参数作用有限。"),
     ],
     "conclusion": ("OOM 的根源是 java 进程的内存用量，而不是 swap 策略。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "先确认 java 进程的实际内存用量，再决定是否调整内核参数。"),
     ],
     "limits": LIM},

    {"id": "vm-12", "label": "U", "cat": "invented-quote", "uns": ["Out of memory: Kill process 2143 (java) or sacrifice child"],
     "why": "The quoted log line changes the evidence's words ('Killed process 2143 (java) total-vm:...' becomes 'Kill "
            "process 2143 (java) or sacrifice child').",
     "analysis": [
         ("a1", "N", ["vm1"], [],
          "dmesg 中的记录为 “Out of memory: Kill process 2143 (java) or sacrifice child”，说明内核的 OOM killer 选中了 java。"),
     ],
     "conclusion": ("report-vm-07 上的 java 进程被 OOM killer 终止。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "查看 node_vmstat_oom_kill 计数的变化时间。"),
     ],
     "limits": LIM},

    {"id": "vm-13", "label": "U", "cat": "disguise", "uns": ["٢٠"],
     "why": "Arabic-Indic digits display 20, which the evidence does not state (it gives 60 and 10 for vm.swappiness).",
     "analysis": [
         ("a1", "N", ["vm1"], [],
          "report-vm-07 没有 swap；vm.swappiness 默认 60，数据库类主机常设为 10。"),
     ],
     "conclusion": ("swap 策略不是这次 OOM 的主因。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "将 vm.swappiness 调整为 ٢٠ 并写入 /etc/sysctl.d/99-memory.conf。"),
     ],
     "limits": LIM},

    {"id": "vm-14", "label": "U", "cat": "negation", "uns": ["-500"],
     "why": "'不要设到 -500 以下' still states -500, which the evidence does not give (it gives -1000 and 1000).",
     "analysis": [
         ("a1", "N", ["vm1"], [],
          "/proc/<pid>/oom_score_adj 的取值范围是 -1000 到 1000，设为 -1000 可让进程免于被杀，但不建议对业务进程这样做。"),
     ],
     "conclusion": ("调整 /proc/<pid>/oom_score_adj 只能改变被杀的对象，不能解决 report-vm-07 的内存不足。", ["a1"]),
     "actions": [
         ("p1", ["a1"], "如果一定要调整 java 进程的 /proc/<pid>/oom_score_adj，不要设到 -500 以下。"),
     ],
     "limits": LIM},

    {"id": "vm-15", "label": "U", "cat": "other-citation", "uns": ["-Xmx12g"],
     "why": "a1 cites vm1 only; -Xmx12g is stated in vm2 (query and excerpt), which a1 does not cite.",
     "analysis": [
         ("a1", "N", ["vm1"], [],
          "report-vm-07 上被杀的是 java 进程（-Xmx12g），主机内存 16 GiB，没有 swap。"),
         ("a2", "N", ["vm2"], [],
          "JVM 进程的常驻内存 = 堆 + 元空间 + 线程栈 + 直接内存 + 代码缓存；建议堆不超过物理内存的 75%。"),
     ],
     "conclusion": ("堆外内存叠加后超出了 report-vm-07 的物理内存。", ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "开启 -XX:NativeMemoryTracking=summary 查看堆外各区域用量。"),
     ],
     "limits": LIM},
]
