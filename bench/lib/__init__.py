"""The benchmark harness behind bench/run and bench/compare, one module per
concept: systems (the servers), resources (/proc accounting), clients (running
client programs; the Family contract), the workloads pgbench, sysbench, ycsb
and connstorm, matrix (which cells run, in what order), report (tables and
colours), charts (PNG) and compare (two runs side by side)."""
