//! SELECT ... FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE between
//! sessions: a locked row makes a conflicting locker wait until the holder
//! ends, NOWAIT fails with 55P03 instead, SKIP LOCKED passes the row by
//! (the job-queue pattern), and shared locks do not block each other.
//! MERGE waits for a locked target row and then acts on its newest version
//! (or inserts when it is gone).
//! Every test also passes against PostgreSQL (`STRATA_TEST_TARGET=postgres`).

use testkit::{TestServer, SETTLE};

fn setup() -> TestServer {
    let s = TestServer::start();
    s.query("create table jobs (id int primary key, state text)");
    s.query("insert into jobs values (1, 'new'), (2, 'new'), (3, 'new')");
    s
}

#[test]
fn for_update_waits_for_the_holder_and_sees_its_commit() {
    for strength in ["update", "no key update"] {
        let s = setup();
        let mut a = s.run("begin; select * from jobs where id = 1 for update");
        let mut b = s.send(&format!(
            "begin; select * from jobs where id = 1 for {strength}; \
             update jobs set state = state || '+b' where id = 1; commit"
        ));
        std::thread::sleep(SETTLE);
        a.query("update jobs set state = 'a' where id = 1; commit");
        assert!(a.until_ready().is_empty());
        assert!(b.until_ready().is_empty(), "FOR {strength} waited and went on");
        assert_eq!(s.query("select state from jobs where id = 1"), "a+b", "FOR {strength}");
    }
}

#[test]
fn nowait_fails_at_once_on_a_locked_row() {
    for strength in ["update", "no key update", "share", "key share"] {
        let s = setup();
        // A DELETE locks the row against every strength.
        let mut a = s.run("begin; delete from jobs where id = 2");
        let mut b = s.send(&format!("select * from jobs where id = 2 for {strength} nowait"));
        assert_eq!(b.until_ready(), vec!["55P03".to_string()], "FOR {strength} NOWAIT");
        a.query("rollback");
        assert!(a.until_ready().is_empty());
    }
}

#[test]
fn skip_locked_hands_each_worker_a_different_job() {
    let s = setup();
    let take = "select id from jobs where state = 'new' order by id limit 1 \
                for no key update skip locked";
    let mut a = s.run(&format!("begin; {take}"));
    let mut b = s.run(&format!("begin; {take}"));
    // a holds job 1 and b job 2: a third worker finds only job 3 free.
    assert_eq!(s.query("select id from jobs order by id for update skip locked"), "3");
    assert_eq!(s.query(take), "3");
    for c in [&mut a, &mut b] {
        c.query("commit");
        assert!(c.until_ready().is_empty());
    }
    assert_eq!(s.query("select id from jobs order by id for update skip locked"), "1\n2\n3");
}

#[test]
fn shared_locks_share_and_block_writers() {
    for strength in ["share", "key share"] {
        let s = setup();
        let mut a = s.run(&format!("begin; select * from jobs where id = 3 for {strength}"));
        let mut b = s.run(&format!("begin; select * from jobs where id = 3 for {strength}"));
        let mut w = s.send("delete from jobs where id = 3");
        std::thread::sleep(SETTLE);
        assert_eq!(s.query("select count(*) from jobs where id = 3"), "1", "the delete waits");
        for c in [&mut a, &mut b] {
            c.query("commit");
            assert!(c.until_ready().is_empty());
        }
        assert!(w.until_ready().is_empty(), "the delete waited for both FOR {strength}");
        assert_eq!(s.query("select count(*) from jobs where id = 3"), "0");
    }
}

#[test]
fn a_locked_row_that_stopped_matching_is_passed_over() {
    let s = setup();
    let mut a = s.run("begin; update jobs set state = 'done' where id = 1");
    // The job-queue statement: take the first new job.
    let mut b = s.send(
        "update jobs set state = 'b' where id = \
         (select id from jobs where state = 'new' order by id limit 1 for update)",
    );
    std::thread::sleep(SETTLE);
    a.query("commit");
    assert!(a.until_ready().is_empty());
    assert!(b.until_ready().is_empty());
    // b waited for job 1, found it done once a committed, and took job 2.
    assert_eq!(s.query("select id, state from jobs order by id"), "1|done\n2|b\n3|new");
}

#[test]
fn for_update_of_locks_only_the_named_table() {
    let s = setup();
    s.query("create table workers (id int primary key, job int)");
    s.query("insert into workers values (10, 1)");
    let mut a = s.run(
        "begin; select w.id, j.state from jobs j join workers w on w.job = j.id \
         where j.id = 1 for update of j",
    );
    let mut b = s.send("select * from workers for update nowait");
    assert!(b.until_ready().is_empty(), "workers rows are not locked");
    b.query("select * from jobs where id = 1 for update nowait");
    assert_eq!(b.until_ready(), vec!["55P03".to_string()], "jobs row 1 is");
    b.query("select * from jobs where id = 2 for update nowait");
    assert!(b.until_ready().is_empty(), "other jobs rows are not");
    a.query("commit");
    assert!(a.until_ready().is_empty());
}

#[test]
fn merge_waits_and_acts_on_the_newest_version_of_a_locked_row() {
    let s = setup();
    let merge = "merge into jobs j using (values (1), (4)) v(id) on j.id = v.id \
                 when matched then update set state = j.state || '+m' \
                 when not matched then insert values (v.id, 'inserted')";
    let mut a = s.run("begin; update jobs set state = 'a' where id = 1");
    let mut b = s.send(merge);
    std::thread::sleep(SETTLE);
    assert_eq!(s.query("select count(*) from jobs"), "3", "the merge waits");
    a.query("commit");
    assert!(a.until_ready().is_empty());
    assert!(b.until_ready().is_empty(), "the merge went on");
    assert_eq!(
        s.query("select id, state from jobs order by id"),
        "1|a+m\n2|new\n3|new\n4|inserted"
    );
}

#[test]
fn merge_inserts_where_the_row_it_matched_was_deleted_meanwhile() {
    let s = setup();
    let mut a = s.run("begin; delete from jobs where id = 2");
    let mut b = s.send(
        "merge into jobs j using (values (2)) v(id) on j.id = v.id \
         when matched then update set state = 'updated' \
         when not matched then insert values (v.id, 'inserted')",
    );
    std::thread::sleep(SETTLE);
    a.query("commit");
    assert!(a.until_ready().is_empty());
    assert!(b.until_ready().is_empty(), "the merge went on");
    assert_eq!(s.query("select state from jobs where id = 2"), "inserted");
}

#[test]
fn merge_tries_its_clauses_again_on_the_changed_row() {
    let s = setup();
    let mut a = s.run("begin; update jobs set state = 'done' where id = 3");
    let mut b = s.send(
        "merge into jobs j using (values (3)) v(id) on j.id = v.id \
         when matched and j.state = 'new' then update set state = 'taken' \
         when matched then delete",
    );
    std::thread::sleep(SETTLE);
    a.query("commit");
    assert!(a.until_ready().is_empty());
    assert!(b.until_ready().is_empty(), "the merge went on");
    // The row is no longer 'new': the second clause deletes it.
    assert_eq!(s.query("select count(*) from jobs where id = 3"), "0");
}

#[test]
fn merge_sends_a_row_that_no_longer_joins_to_not_matched() {
    let s = setup();
    let mut a = s.run("begin; update jobs set state = 'done' where id = 2");
    let mut b = s.send(
        "merge into jobs j using (values (2)) v(id) on j.id = v.id and j.state = 'new' \
         when matched then update set state = 'taken' \
         when not matched then insert values (v.id + 10, 'unmatched')",
    );
    std::thread::sleep(SETTLE);
    a.query("commit");
    assert!(a.until_ready().is_empty());
    assert!(b.until_ready().is_empty(), "the merge went on");
    // The newest version fails the join: the row is left as it is and
    // NOT MATCHED inserts.
    assert_eq!(s.query("select state from jobs where id = 2"), "done");
    assert_eq!(s.query("select state from jobs where id = 12"), "unmatched");
}
