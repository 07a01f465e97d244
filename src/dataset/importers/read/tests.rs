//! Tests of the reader against damaged files: deep and broken records in arrays, undecodable bytes,
//! empty files, wrong shapes, other encodings and unreadable files.

use super::json_array::scan_value;
use super::*;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn scanner_finds_value_ends_at_any_depth() {
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    assert_eq!(scan_value(deep.as_bytes(), 0), (10000, true));
    assert_eq!(scan_value(br#"{"a": "x]}\"y"} , 2"#, 0), (15, true));
    assert_eq!(scan_value(b"12 ,", 0), (2, true));
    assert_eq!(scan_value(b"12]", 0), (2, true));
    assert!(!scan_value(br#"{"a": [1, 2"#, 0).1, "an unclosed record is incomplete");
}

#[test]
fn a_deep_record_costs_only_itself_in_an_array() {
    let tmp = tempfile::tempdir().unwrap();
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let p = write(
        tmp.path(),
        "a.json",
        format!("[\n{{\"id\": \"a\"}},\n{deep},\n{{\"id\": \"c\"}}\n]\n").as_bytes(),
    );
    let mut ledger = Ledger::default();
    let raws = Reader { name: "a.json", tasks: true }.json_array(&p, &mut ledger);
    let ids: Vec<&str> = raws.iter().map(|r| r.value["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a", "c"]);
    assert_eq!((raws[1].at.record, raws[1].at.line), (Some(3), Some(4)));
    let d = &ledger.defects;
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        (d[0].record, d[0].line, d[0].action, d[0].affected),
        (Some(2), Some(3), "skipped", Some(1))
    );
    assert!(d[0].reason.contains("nested more than 128 levels"), "{}", d[0].reason);
}

#[test]
fn invalid_utf8_is_replaced_and_counted_per_record() {
    let tmp = tempfile::tempdir().unwrap();
    let p = write(
        tmp.path(),
        "q.jsonl",
        b"{\"q\": \"ok\"}\n\n{\"q\": \"caf\xe9 \xff\"}\n{\"q\": \"fine\"}\n",
    );
    let mut ledger = Ledger::default();
    let raws = Reader { name: "q.jsonl", tasks: true }.jsonl(&p, &mut ledger);
    assert_eq!(raws.len(), 3, "no record is lost to bad bytes");
    assert_eq!(raws.iter().map(|r| r.lossy).collect::<Vec<_>>(), [false, true, false]);
    assert_eq!((raws[1].at.record, raws[1].at.line), (Some(2), Some(3)));
    assert_eq!(raws[1].value["q"], "caf\u{fffd} \u{fffd}");
    assert_eq!(ledger.defects.len(), 1);
    let d = &ledger.defects[0];
    assert_eq!((d.action, d.affected, d.record, d.line), ("repaired", Some(1), None, Some(3)));
    assert!(
        d.reason.starts_with("2 bytes of invalid UTF-8 in 2 place(s) (line 3)")
            && d.reason.contains("1 record(s) affected (record 2)"),
        "{}",
        d.reason
    );
}

#[test]
fn empty_and_non_array_files_get_one_honest_row() {
    let tmp = tempfile::tempdir().unwrap();
    let mut ledger = Ledger::default();
    let r = Reader { name: "x.json", tasks: true };
    assert!(r.json_array(&write(tmp.path(), "e.json", b" \n"), &mut ledger).is_empty());
    assert!(r.json_array(&write(tmp.path(), "o.json", b"{\"a\": 1}"), &mut ledger).is_empty());
    assert!(r.jsonl(&write(tmp.path(), "e.jsonl", b""), &mut ledger).is_empty());
    let reasons: Vec<&str> = ledger.defects.iter().map(|d| d.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "the file is empty: it holds no records",
            "the file holds one object (a single record), expected a JSON array of records; 1 record not imported",
            "the file is empty: it holds no records"
        ]
    );
}

/// Every shape a file can have instead of the expected one, and how many records it is counted as.
#[test]
fn wrong_shapes_are_counted_where_they_can_be() {
    let rec = r#"{"id": 1, "q": "x", "tags": [1]}"#;
    let cases = [
        (
            format!(r#"{{"data": [{rec}, {rec}, {rec}]}}"#),
            Some(3),
            "an object with 3 records in its `data` array",
        ),
        (format!(r#"{{"a": {rec}, "b": {rec}}}"#), Some(2), "an object of 2 records, one per key"),
        (rec.to_string(), Some(1), "one object (a single record)"),
        (format!("{rec}\n{rec}\n\n{rec}\n"), Some(3), "JSON Lines, 3 records"),
        ("\"text\"".to_string(), Some(0), "a string, no record"),
        (format!(r#"{{"data": [{rec}, {rec}"#), None, "nothing readable as JSON"),
    ];
    for (text, records, holds) in cases {
        let c = count(&text);
        assert_eq!(c.records, records, "{text}");
        assert!(c.holds.starts_with(holds), "{text}: {}", c.holds);
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut ledger = Ledger::default();
    let arr = format!("[{rec}, {rec}]\n");
    let r = Reader { name: "q.jsonl", tasks: true };
    assert!(r.jsonl(&write(tmp.path(), "a.jsonl", arr.as_bytes()), &mut ledger).is_empty());
    let pretty =
        serde_json::to_string_pretty(&serde_json::from_str::<Value>(rec).unwrap()).unwrap();
    assert!(r.jsonl(&write(tmp.path(), "p.jsonl", pretty.as_bytes()), &mut ledger).is_empty());
    assert!(
        Reader { name: "x.json", tasks: false }
            .json_array(
                &write(tmp.path(), "o.json", format!(r#"{{"d": [{rec}]}}"#).as_bytes()),
                &mut ledger
            )
            .is_empty()
    );
    assert_eq!(
        r.json_array(&write(tmp.path(), "t.json", format!("{arr}{arr}").as_bytes()), &mut ledger)
            .len(),
        2
    );
    let rows: Vec<(Option<usize>, Option<usize>)> =
        ledger.defects.iter().map(|d| (d.line, d.affected)).collect();
    assert_eq!(
        rows,
        [(Some(1), Some(2)), (Some(1), Some(1)), (Some(1), Some(0)), (Some(2), Some(2))],
        "{:#?}",
        ledger.defects
    );
    assert!(
        ledger.defects[3].reason.starts_with("the text after the closing `]` (line 2"),
        "{}",
        ledger.defects[3].reason
    );
}

#[test]
fn other_encodings_are_read_and_unreadable_files_are_uncounted() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "[{\"id\": \"a\"}, {\"id\": \"é\"}]";
    let mut le = vec![0xFF, 0xFE];
    text.encode_utf16().for_each(|u| le.extend(u.to_le_bytes()));
    let mut bom8 = vec![0xEF, 0xBB, 0xBF];
    bom8.extend_from_slice(text.as_bytes());
    let r = Reader { name: "f.json", tasks: true };
    let mut ledger = Ledger::default();
    assert_eq!(r.json_array(&write(tmp.path(), "le.json", &le), &mut ledger).len(), 2);
    assert_eq!(r.json_array(&write(tmp.path(), "b8.json", &bom8), &mut ledger).len(), 2);
    assert_eq!(
        ledger.defects.len(),
        1,
        "a UTF-8 byte-order mark needs no row: {:?}",
        ledger.defects
    );
    assert!(
        ledger.defects[0]
            .reason
            .starts_with("the file is UTF-16 LE with a byte-order mark, not UTF-8")
    );
    let mut ledger = Ledger::default();
    assert!(
        r.json_array(&write(tmp.path(), "z.json", b"\x1f\x8b\x08\x00\x00\x00"), &mut ledger)
            .is_empty()
    );
    std::fs::create_dir(tmp.path().join("d.json")).unwrap();
    assert!(r.json_array(&tmp.path().join("d.json"), &mut ledger).is_empty());
    let rows: Vec<(&str, Option<usize>)> =
        ledger.defects.iter().map(|d| (d.action, d.affected)).collect();
    assert_eq!(rows, [("skipped", None), ("skipped", Some(0))]);
    assert!(ledger.defects[1].reason.starts_with("is a directory"));
}

#[test]
fn broken_array_structure_loses_only_what_is_broken() {
    let tmp = tempfile::tempdir().unwrap();
    // missing comma between records 1 and 2, a malformed record 3, a truncated record 4
    let p = write(tmp.path(), "b.json", b"[{\"id\": 1}\n{\"id\": 2},\n{\"id\": 3,,},\n{\"id\": 4");
    let mut ledger = Ledger::default();
    let raws = Reader { name: "b.json", tasks: true }.json_array(&p, &mut ledger);
    assert_eq!(raws.iter().map(|r| r.value["id"].as_i64().unwrap()).collect::<Vec<_>>(), [1, 2]);
    let rows: Vec<(Option<usize>, &str, Option<usize>)> =
        ledger.defects.iter().map(|d| (d.record, d.action, d.affected)).collect();
    assert_eq!(
        rows,
        [
            (Some(2), "repaired", Some(0)),
            (Some(3), "skipped", Some(1)),
            (Some(4), "skipped", Some(1))
        ]
    );
    assert!(
        ledger.defects[1].reason.starts_with("not valid JSON")
            && ledger.defects[1].reason.contains("line 3"),
        "{}",
        ledger.defects[1].reason
    );
    assert!(ledger.defects[2].reason.contains("cut off"));
}
