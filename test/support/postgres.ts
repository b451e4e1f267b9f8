/**
 * A throwaway PostgreSQL cluster for one test file: `initdb` into a temporary directory, a server on 127.0.0.1 at a
 * free port (its socket in the same directory), stopped and removed by {@link stopPostgres}. The Debian package's
 * binaries are used (`.ci/run` installs `postgresql` where it is missing). `initdb` refuses to run as root: as root
 * the cluster belongs to the `postgres` user the package creates.
 */
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

/** A running cluster: its connection URL and how to stop it. */
export interface Postgres {
  readonly url: string
  readonly port: number
  readonly stop: () => void
  /** A new empty database in the cluster, its URL (tests that must not see each other's runners use their own). */
  readonly database: (name: string) => string
}

/** The directory of the newest installed server's binaries, or undefined (then the tests that need one skip). */
export const postgresBin = (): string | undefined => {
  const root = "/usr/lib/postgresql"
  if (!fs.existsSync(root)) return undefined
  const versions = fs.readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a))
  const found = versions.map((version) => path.join(root, version, "bin")).find((bin) =>
    fs.existsSync(path.join(bin, "initdb")) && fs.existsSync(path.join(bin, "pg_ctl"))
  )
  return found
}

/** A port nobody listens on at 127.0.0.1 now. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const isRoot = (): boolean => process.getuid?.() === 0

/** Runs a server binary as the cluster's owner. */
const asOwner = (bin: string, args: ReadonlyArray<string>): string =>
  isRoot()
    ? execFileSync("runuser", ["-u", "postgres", "--", bin, ...args], { encoding: "utf8", stdio: "pipe" })
    : execFileSync(bin, args, { encoding: "utf8", stdio: "pipe" })

/** Starts a fresh cluster; resolves once it accepts connections. */
export const startPostgres = async (bin: string): Promise<Postgres> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "etr-pg-"))
  const data = path.join(dir, "data")
  if (isRoot()) execFileSync("chown", ["-R", "postgres:postgres", dir])
  fs.chmodSync(dir, 0o755)
  asOwner(path.join(bin, "initdb"), ["-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"])
  const port = await freePort()
  const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c max_connections=200`
  asOwner(path.join(bin, "pg_ctl"), ["-D", data, "-o", options, "-l", path.join(dir, "log"), "-w", "start"])
  const stop = () => {
    try {
      asOwner(path.join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"])
    } catch {
      // already stopped
    }
    fs.rmSync(dir, { recursive: true, force: true })
  }
  process.once("exit", stop)
  const database = (name: string): string => {
    const url = `postgres://postgres@127.0.0.1:${port}/${name}`
    execFileSync(path.join(bin, "psql"), [
      `postgres://postgres@127.0.0.1:${port}/postgres`,
      "-c",
      `CREATE DATABASE ${name}`
    ], {
      stdio: "pipe"
    })
    return url
  }
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, stop, database }
}

/** Spawns a process and waits for it, for `psql`-like one-offs in tests. */
export const run = (command: string, args: ReadonlyArray<string>): Promise<string> =>
  new Promise((resolve, reject) => {
    const proc = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    proc.stdout.on("data", (chunk) => (out += chunk))
    proc.stderr.on("data", (chunk) => (out += chunk))
    proc.on("close", (code) => code === 0 ? resolve(out) : reject(new Error(`${command} exited ${code}: ${out}`)))
  })
