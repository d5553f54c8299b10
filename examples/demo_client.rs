//! A scripted MCP client for trying mcpcassette out: it starts the command
//! given after `--` (a real server, `mcpcassette record`, or `mcpcassette
//! replay`), runs one session that touches every kind of MCP message, and
//! prints what came back.
//!
//! ```text
//! demo_client [--era legacy|modern] [--json] -- COMMAND [ARGS...]
//! ```
//!
//! `--json` prints the whole transcript as JSON (ids of server requests
//! left out, since replay gives them fresh ones), so two runs can be
//! compared with `diff`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Map, Value, json};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(split) = args.iter().position(|a| a == "--") else {
        eprintln!("usage: demo_client [--era legacy|modern] [--json] -- COMMAND [ARGS...]");
        return ExitCode::from(2);
    };
    let (options, command) = (&args[..split], &args[split + 1..]);
    let modern = options
        .windows(2)
        .any(|w| w[0] == "--era" && w[1] == "modern");
    let as_json = options.iter().any(|o| o == "--json");
    let Some((program, program_args)) = command.split_first() else {
        eprintln!("demo_client: no command after --");
        return ExitCode::from(2);
    };
    let mut client = match Client::start(program, program_args, modern) {
        Ok(client) => client,
        Err(e) => {
            eprintln!("demo_client: cannot start {program}: {e}");
            return ExitCode::from(2);
        }
    };
    let transcript = client.run_session();
    let status = client.finish();
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&transcript).expect("JSON")
        );
    } else {
        for step in &transcript {
            print_step(step);
        }
    }
    if status.success() {
        ExitCode::SUCCESS
    } else {
        eprintln!("demo_client: the server exited with {status}");
        ExitCode::from(1)
    }
}

/// One request and everything the server sent until its response.
fn print_step(step: &Value) {
    let params = step["request"]["params"].clone();
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .unwrap_or("");
    println!(
        "→ {} {name}",
        step["request"]["method"].as_str().unwrap_or("?")
    );
    for message in step["before"].as_array().into_iter().flatten() {
        println!(
            "    ← {} {}",
            message["method"].as_str().unwrap_or("?"),
            brief(&message["params"])
        );
    }
    let response = &step["response"];
    match response.get("error") {
        Some(error) => println!(
            "  ← error {} {}",
            error["code"],
            error["message"].as_str().unwrap_or("")
        ),
        None => println!("  ← {}", brief(&response["result"])),
    }
    if let Some(retry) = step.get("retry") {
        println!("  (input required: retrying with inputResponses)");
        print_step(retry);
    }
}

fn brief(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(110) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    next_id: i64,
    modern: bool,
}

impl Client {
    fn start(program: &str, args: &[String], modern: bool) -> std::io::Result<Client> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                match serde_json::from_str::<Value>(&line) {
                    Ok(v) => {
                        if tx.send(v).is_err() {
                            break;
                        }
                    }
                    Err(e) => eprintln!("demo_client: server wrote a non-JSON line ({e}): {line}"),
                }
            }
        });
        Ok(Client {
            child,
            stdin,
            lines,
            next_id: 1,
            modern,
        })
    }

    fn run_session(&mut self) -> Vec<Value> {
        let mut steps = Vec::new();
        if self.modern {
            steps.push(self.request("server/discover", json!({})));
        } else {
            steps.push(self.request(
                "initialize",
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"sampling": {}, "elicitation": {}, "roots": {"listChanged": false}},
                    "clientInfo": {"name": "demo_client", "version": "0.1.0"}
                }),
            ));
            self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
            steps.push(self.request("ping", json!({})));
        }
        let call = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
        steps.push(self.request("tools/list", json!({})));
        steps.push(self.request("tools/call", call("echo", json!({"message": "hello"}))));
        steps.push(self.request("tools/call", call("add", json!({"a": 2, "b": 40}))));
        let mut count = call("count", json!({"steps": 3}));
        count["_meta"] = json!({"progressToken": "count-1"});
        steps.push(self.request("tools/call", count));
        steps.push(self.request("tools/call", call("divide", json!({"a": 1, "b": 0}))));
        steps.push(self.request("tools/call", call("explode", json!({}))));
        steps.push(self.request(
            "tools/call",
            call(
                "summarize",
                json!({"text": "cassettes make MCP tests fast"}),
            ),
        ));
        steps.push(self.request("tools/call", call("confirm", json!({"action": "deploy"}))));
        steps.push(self.request("tools/call", call("roots", json!({}))));
        steps.push(self.request("resources/list", json!({})));
        steps.push(self.request("resources/templates/list", json!({})));
        steps.push(self.request("resources/read", json!({"uri": "demo://readme"})));
        steps.push(self.request("resources/read", json!({"uri": "demo://notes/7"})));
        steps.push(self.request("prompts/list", json!({})));
        steps.push(self.request(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        ));
        steps.push(self.request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "a"}}),
        ));
        steps
    }

    /// Sends a request, answering server requests (legacy) and retrying
    /// `input_required` results (modern) until the final response.
    fn request(&mut self, method: &str, mut params: Value) -> Value {
        if self.modern {
            let meta = params
                .as_object_mut()
                .expect("params are an object")
                .entry("_meta")
                .or_insert(json!({}));
            meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
            meta["io.modelcontextprotocol/clientCapabilities"] =
                json!({"sampling": {}, "elicitation": {"form": {}}, "roots": {}});
            meta["io.modelcontextprotocol/clientInfo"] =
                json!({"name": "demo_client", "version": "0.1.0"});
        }
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(&request);
        let mut before = Vec::new();
        loop {
            let message = self.recv();
            let is_request = message.get("method").is_some() && message.get("id").is_some();
            if is_request {
                let result = answer(&message);
                self.send(&json!({"jsonrpc": "2.0", "id": message["id"], "result": result}));
                let mut shown = message.clone();
                shown.as_object_mut().expect("object").remove("id");
                before.push(shown);
            } else if message.get("method").is_some() {
                before.push(message);
            } else if message.get("id") == Some(&json!(id)) {
                if let Some(retry) = self.retry_params(&params, &message) {
                    let mut step =
                        json!({"request": request, "before": before, "response": message});
                    step["retry"] = self.request(method, retry);
                    return step;
                }
                return json!({"request": request, "before": before, "response": message});
            }
        }
    }

    /// For a modern `input_required` result: the params of the retry.
    fn retry_params(&self, params: &Value, response: &Value) -> Option<Value> {
        let result = response.get("result")?;
        if result.get("resultType")? != "input_required" {
            return None;
        }
        let mut responses = Map::new();
        for (key, input) in result.get("inputRequests")?.as_object()? {
            responses.insert(key.clone(), answer(input));
        }
        let mut retry = params.clone();
        retry["inputResponses"] = Value::Object(responses);
        if let Some(state) = result.get("requestState") {
            retry["requestState"] = state.clone();
        }
        Some(retry)
    }

    fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("JSON");
        line.push(b'\n');
        // A server that has exited shows up as a missing answer below.
        let _ = self
            .stdin
            .write_all(&line)
            .and_then(|()| self.stdin.flush());
    }

    fn recv(&mut self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| {
                eprintln!("demo_client: no answer from the server");
                std::process::exit(1)
            })
    }

    fn finish(self) -> std::process::ExitStatus {
        let Client {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        child.wait().expect("wait for the server")
    }
}

/// The client's answers to sampling, elicitation and roots requests.
fn answer(request: &Value) -> Value {
    match request["method"].as_str() {
        Some("sampling/createMessage") => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "a short summary"},
            "model": "demo-model",
            "stopReason": "endTurn"
        }),
        Some("elicitation/create") => json!({"action": "accept", "content": {"confirm": true}}),
        Some("roots/list") => {
            json!({"roots": [{"uri": "file:///work/project", "name": "project"}]})
        }
        _ => json!({}),
    }
}
