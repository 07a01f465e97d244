//! `junit.xml` validates against the common JUnit schema (`tests/fixtures/junit.xsd`) with a real XML
//! Schema validator: the system libxml2, loaded at run time through its C API. A broken document is
//! rejected (so the validator is really validating), and the counts agree with the trial records.

mod common;
use common::*;
use std::ffi::{CString, c_char, c_int, c_void};

unsafe extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

const RTLD_NOW: c_int = 2;

type FromBuffer = unsafe extern "C" fn(*const c_char, c_int) -> *mut c_void;
type FromPtr = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type ReadMemory =
    unsafe extern "C" fn(*const c_char, c_int, *const c_char, *const c_char, c_int) -> *mut c_void;
type ValidateDoc = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
type Free = unsafe extern "C" fn(*mut c_void);

/// The libxml2 functions XML Schema validation needs.
struct LibXml {
    new_mem_parser_ctxt: FromBuffer,
    schema_parse: FromPtr,
    new_valid_ctxt: FromPtr,
    read_memory: ReadMemory,
    validate_doc: ValidateDoc,
    free_doc: Free,
}

impl LibXml {
    fn load() -> LibXml {
        let handle = ["libxml2.so.2", "libxml2.so", "libxml2.2.dylib"]
            .iter()
            .map(|n| unsafe { dlopen(CString::new(*n).unwrap().as_ptr(), RTLD_NOW) })
            .find(|h| !h.is_null())
            .expect(
                "this test needs the libxml2 shared library (Debian/Ubuntu: apt install libxml2)",
            );
        let sym = |name: &str| {
            let p = unsafe { dlsym(handle, CString::new(name).unwrap().as_ptr()) };
            assert!(!p.is_null(), "libxml2 has no {name}");
            p
        };
        unsafe {
            LibXml {
                new_mem_parser_ctxt: std::mem::transmute::<*mut c_void, FromBuffer>(sym(
                    "xmlSchemaNewMemParserCtxt",
                )),
                schema_parse: std::mem::transmute::<*mut c_void, FromPtr>(sym("xmlSchemaParse")),
                new_valid_ctxt: std::mem::transmute::<*mut c_void, FromPtr>(sym(
                    "xmlSchemaNewValidCtxt",
                )),
                read_memory: std::mem::transmute::<*mut c_void, ReadMemory>(sym("xmlReadMemory")),
                validate_doc: std::mem::transmute::<*mut c_void, ValidateDoc>(sym(
                    "xmlSchemaValidateDoc",
                )),
                free_doc: std::mem::transmute::<*mut c_void, Free>(sym("xmlFreeDoc")),
            }
        }
    }

    /// Validate `xml` against the schema `xsd`: `Ok` when valid, else libxml2's error code.
    fn validate(&self, xsd: &[u8], xml: &[u8]) -> Result<(), i32> {
        unsafe {
            let pctxt = (self.new_mem_parser_ctxt)(xsd.as_ptr().cast(), xsd.len() as c_int);
            assert!(!pctxt.is_null());
            let schema = (self.schema_parse)(pctxt);
            assert!(!schema.is_null(), "the schema itself does not parse");
            let vctxt = (self.new_valid_ctxt)(schema);
            let url = CString::new("junit.xml").unwrap();
            let doc = (self.read_memory)(
                xml.as_ptr().cast(),
                xml.len() as c_int,
                url.as_ptr(),
                std::ptr::null(),
                0,
            );
            if doc.is_null() {
                return Err(-2); // not well-formed
            }
            let rc = (self.validate_doc)(vctxt, doc);
            (self.free_doc)(doc);
            if rc == 0 { Ok(()) } else { Err(rc) }
        }
    }
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

#[test]
fn junit_output_validates_against_the_junit_schema() {
    let xsd = std::fs::read(repo().join("tests/fixtures/junit.xsd")).unwrap();
    let lib = LibXml::load();
    let tmp = tempfile::tempdir().unwrap();
    let o = toolpick(
        &argv_with(
            "run --out {} --run-id r --quiet --backends lexical,random",
            &[tmp.path().to_str().unwrap()],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let xml = std::fs::read_to_string(tmp.path().join("r/junit.xml")).unwrap();
    assert_eq!(lib.validate(&xsd, xml.as_bytes()), Ok(()));

    // One test case per trial, one failure per failed trial (the bundled suite has failures, queries
    // with quotes and ampersands, so escaping is exercised too).
    let trials: Vec<serde_json::Value> = std::fs::read_to_string(tmp.path().join("r/trials.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(count(&xml, "<testcase "), trials.len());
    let failed =
        trials.iter().filter(|t| t["score"]["pass"] == false && t.get("error").is_none()).count();
    assert!(failed > 0);
    assert_eq!(count(&xml, "<failure "), failed);
    assert!(xml.contains(&format!("tests=\"{}\" failures=\"{failed}\"", trials.len())));

    // The validator rejects what the schema forbids: a test case without a name, and a count that is not a number.
    let case = xml.find("<testcase ").unwrap();
    let name = case + xml[case..].find(" name=\"").unwrap();
    let nameless = format!("{} title=\"{}", &xml[..name], &xml[name + " name=\"".len()..]);
    assert!(lib.validate(&xsd, nameless.as_bytes()).is_err());
    let bad_count = xml.replacen("tests=\"", "tests=\"many", 1);
    assert!(lib.validate(&xsd, bad_count.as_bytes()).is_err());
}
