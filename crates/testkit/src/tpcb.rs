//! pgbench's TPC-B-like workload keeps four sums equal: every transaction
//! adds the same delta to one account, one teller, one branch and one history
//! row. Checking them after a run (or after a crash) shows that transactions
//! were atomic and none was lost halfway.

use crate::TestServer;

/// Checks pgbench's TPC-B invariants: sum(abalance) = sum(tbalance) =
/// sum(bbalance) = sum(delta of history). Returns the history row count,
/// which equals the number of committed TPC-B transactions.
pub fn check_tpcb_invariants(s: &TestServer) -> u64 {
    let sums = s.query(
        "select (select coalesce(sum(abalance), 0) from pgbench_accounts), \
                (select coalesce(sum(tbalance), 0) from pgbench_tellers), \
                (select coalesce(sum(bbalance), 0) from pgbench_branches), \
                (select coalesce(sum(delta), 0) from pgbench_history)",
    );
    let parts: Vec<&str> = sums.split('|').collect();
    assert_eq!(parts.len(), 4, "unexpected sums row {sums:?}");
    assert_eq!(parts[0], parts[1], "sum(abalance) != sum(tbalance): {sums}");
    assert_eq!(parts[1], parts[2], "sum(tbalance) != sum(bbalance): {sums}");
    assert_eq!(parts[2], parts[3], "sum(bbalance) != sum(delta): {sums}");
    s.query("select count(*) from pgbench_history").parse().expect("count(*) is an integer")
}

/// Extracts the integer after `label` in pgbench's output, e.g.
/// `pgbench_number(out, "number of transactions actually processed:")`.
pub fn pgbench_number(output: &str, label: &str) -> Option<u64> {
    output
        .lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.split('/').next())
        .and_then(|n| n.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pgbench_counts() {
        let out = "number of clients: 4\n\
                   number of transactions actually processed: 1234/5000\n\
                   number of failed transactions: 0 (0.000%)\n";
        assert_eq!(pgbench_number(out, "number of transactions actually processed:"), Some(1234));
        assert_eq!(pgbench_number(out, "number of failed transactions:"), Some(0));
        assert_eq!(pgbench_number(out, "latency average ="), None);
    }
}
