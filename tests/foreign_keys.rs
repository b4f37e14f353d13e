//! Foreign keys under concurrency: a transaction adding a reference and one
//! removing the referenced row wait for each other, and whichever commits
//! first decides, as in PostgreSQL. Outcomes, not timings, are asserted.

use testkit::{TestServer, SETTLE};

fn setup(s: &TestServer, on_delete: &str) {
    s.query("create table p (id int primary key, v text)");
    s.query(&format!("create table c (id int primary key, pid int references p {on_delete})"));
    s.query("insert into p values (1, 'one'), (2, 'two')");
}

#[test]
fn parent_delete_waits_for_an_open_child_insert_and_then_fails() {
    let s = TestServer::start();
    setup(&s, "");
    let mut child = s.run("begin; insert into c values (10, 1)");
    let mut del = s.send("delete from p where id = 1");
    std::thread::sleep(SETTLE);
    child.query("commit");
    assert!(child.until_ready().is_empty());
    assert_eq!(del.until_ready(), vec!["23503".to_string()], "the committed child blocks it");
    assert_eq!(s.query("select count(*) from p where id = 1"), "1");
}

#[test]
fn cascade_delete_removes_a_child_committed_while_it_waited() {
    let s = TestServer::start();
    setup(&s, "on delete cascade");
    let mut child = s.run("begin; insert into c values (10, 1)");
    let mut del = s.send("delete from p where id = 1");
    std::thread::sleep(SETTLE);
    child.query("commit");
    assert!(child.until_ready().is_empty());
    assert!(del.until_ready().is_empty());
    assert_eq!(s.query("select count(*) from c"), "0", "no orphan survives");
}

#[test]
fn child_insert_waits_for_an_open_parent_delete_and_then_fails() {
    let s = TestServer::start();
    setup(&s, "");
    let mut del = s.run("begin; delete from p where id = 2");
    let mut child = s.send("insert into c values (20, 2)");
    std::thread::sleep(SETTLE);
    del.query("commit");
    assert!(del.until_ready().is_empty());
    assert_eq!(child.until_ready(), vec!["23503".to_string()], "the parent is gone");
    assert_eq!(s.query("select count(*) from c"), "0");
}

#[test]
fn child_insert_succeeds_when_the_parent_delete_rolls_back() {
    let s = TestServer::start();
    setup(&s, "");
    let mut del = s.run("begin; delete from p where id = 2");
    let mut child = s.send("insert into c values (20, 2)");
    std::thread::sleep(SETTLE);
    del.query("rollback");
    assert!(del.until_ready().is_empty());
    assert!(child.until_ready().is_empty());
    assert_eq!(s.query("select pid from c"), "2");
}

#[test]
fn two_children_of_one_parent_do_not_block_each_other() {
    let s = TestServer::start();
    setup(&s, "");
    let mut a = s.run("begin; insert into c values (1, 1)");
    // Would hang if references took the parent exclusively.
    let _b = s.run("begin; insert into c values (2, 1); commit");
    a.query("commit");
    assert!(a.until_ready().is_empty());
    assert_eq!(s.query("select count(*) from c"), "2");
}

/// PostgreSQL reports the violation (not a serialization failure) although
/// the child committed after the deleter's snapshot.
#[test]
fn repeatable_read_delete_fails_on_a_child_it_cannot_see() {
    let s = TestServer::start();
    setup(&s, "");
    let mut del = s.run("begin isolation level repeatable read; select count(*) from p");
    s.query("insert into c values (10, 1)");
    del.query("delete from p where id = 1");
    assert_eq!(del.until_ready(), vec!["23503".to_string()]);
}
