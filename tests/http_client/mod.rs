//! A plain HTTP/1.1 client over `std::net` for the streamable-HTTP tests: every header is the test's
//! to choose (a foreign `Host`, an `Origin`, no session), which an MCP SDK would not let it send, and
//! each request is its own connection (`Connection: close`), read to its end.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One HTTP response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message answered: the body when it is JSON, else the last `data:` event of the
    /// SSE stream that is.
    pub fn message(&self) -> Value {
        if let Ok(v) = serde_json::from_str(&self.body) {
            return v;
        }
        self.body
            .lines()
            .rev()
            .filter_map(|l| l.strip_prefix("data:"))
            .find_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .unwrap_or_else(|| panic!("no JSON-RPC message in {self:?}"))
    }
}

/// `METHOD /mcp` at `addr` (`127.0.0.1:PORT`) with these headers (a `Host` among them replaces the
/// default one, `addr`) and body.
pub fn request(addr: &str, method: &str, headers: &[(&str, &str)], body: Option<&str>) -> Reply {
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut head = format!("{method} /mcp HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head += &format!("Host: {addr}\r\n");
    }
    for (k, v) in headers {
        head += &format!("{k}: {v}\r\n");
    }
    let body = body.unwrap_or("");
    if method == "POST" {
        head += "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";
    }
    head += &format!("Content-Length: {}\r\n\r\n", body.len());
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    parse(&raw)
}

fn parse(raw: &[u8]) -> Reply {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a response head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    if chunked {
        body = dechunk(&body);
    }
    Reply { status, headers, body: String::from_utf8_lossy(&body).into_owned() }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = data.windows(2).position(|w| w == b"\r\n") else { return out };
        let size = usize::from_str_radix(
            String::from_utf8_lossy(&data[..end]).split(';').next().unwrap().trim(),
            16,
        )
        .unwrap_or(0);
        if size == 0 {
            return out;
        }
        let start = end + 2;
        out.extend_from_slice(&data[start..(start + size).min(data.len())]);
        data = &data[(start + size + 2).min(data.len())..];
    }
}

/// An `initialize` request's body.
pub fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw-http-test", "version": "1"}}})
    .to_string()
}

/// A client session: `initialize` (with `headers` added), then `notifications/initialized`.
pub struct Session {
    pub addr: String,
    pub id: String,
    next: u64,
}

impl Session {
    pub fn open(addr: &str, headers: &[(&str, &str)]) -> Session {
        let r = request(addr, "POST", headers, Some(&initialize_body()));
        assert_eq!(r.status, 200, "{r:?}");
        let id = r.header("mcp-session-id").unwrap_or_else(|| panic!("no session: {r:?}"));
        let s = Session { addr: addr.to_string(), id: id.to_string(), next: 2 };
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = s.post(&note.to_string());
        assert!(r.status / 100 == 2, "{r:?}");
        s
    }

    pub fn post(&self, body: &str) -> Reply {
        let headers =
            [("Mcp-Session-Id", self.id.as_str()), ("MCP-Protocol-Version", "2025-11-25")];
        request(&self.addr, "POST", &headers, Some(body))
    }

    /// A request in the session; its JSON-RPC answer.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        let r = self.post(&body.to_string());
        assert_eq!(r.status, 200, "{r:?}");
        r.message()
    }

    /// `tools/call`: the text of its result and whether it is an error.
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> (String, bool) {
        let m = self.call("tools/call", json!({"name": name, "arguments": arguments}));
        let result = &m["result"];
        assert!(result.is_object(), "{m}");
        let text = result["content"][0]["text"].as_str().unwrap_or_default().to_string();
        (text, result["isError"] == true)
    }

    /// End the session (`DELETE`).
    pub fn delete(self) -> Reply {
        request(&self.addr, "DELETE", &[("Mcp-Session-Id", self.id.as_str())], None)
    }
}
