import * as fs from "node:fs"
const ents = fs.readdirSync("/proc").filter((e) => /^\d+$/.test(e))
let t = performance.now(); for (let k = 0; k < 10; k++) fs.readdirSync("/proc"); console.log("readdir", (performance.now() - t) / 10)
t = performance.now(); for (let k = 0; k < 10; k++) for (const e of ents) { try { fs.readFileSync(`/proc/${e}/stat`, "latin1") } catch {} } console.log("stat all", (performance.now() - t) / 10)
t = performance.now(); for (let k = 0; k < 10; k++) for (const e of ents) { try { fs.readFileSync(`/proc/${e}/environ`) } catch {} } console.log("environ all", (performance.now() - t) / 10)
const b = Buffer.alloc(4096)
t = performance.now(); for (let k = 0; k < 10; k++) for (const e of ents) { try { const fd = fs.openSync(`/proc/${e}/stat`, "r"); fs.readSync(fd, b, 0, 4096, 0); fs.closeSync(fd) } catch {} } console.log("stat raw", (performance.now() - t) / 10)
