// An inference-server double for the launcher's tests: `health-server.mjs PORT` answers
// GET /health with 200 on 127.0.0.1:PORT and prints its CUDA_VISIBLE_DEVICES and the variables
// vLLM's weight sync needs (VLLM_SERVER_DEV_MODE, VLLM_ALLOW_RUNTIME_LORA_UPDATING);
// `health-server.mjs PORT exit` writes a model-loading error to stderr and exits with status 3.
import { createServer } from "node:http";

const [port, mode] = process.argv.slice(2);
if (mode === "exit") {
  process.stderr.write("loading the model\nRuntimeError: cannot load the model (simulated)\n");
  process.exit(3);
}
process.stdout.write(`devices=${process.env.CUDA_VISIBLE_DEVICES ?? ""}\n`);
process.stdout.write(
  `dev_mode=${process.env.VLLM_SERVER_DEV_MODE ?? ""} lora_updating=${process.env.VLLM_ALLOW_RUNTIME_LORA_UPDATING ?? ""}\n`,
);
createServer((req, res) => res.writeHead(req.url === "/health" ? 200 : 404).end("{}")).listen(
  Number(port),
  "127.0.0.1",
);
