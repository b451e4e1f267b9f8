/**
 * The `sandbox` settings and the rules that configure the shell's sandbox: what applies, what a repository that is
 * not trusted cannot widen, and the warnings for keys this runtime does not apply.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { sandboxConfig } from "../../src/Settings/Sandbox.js"
import { applyTrust, formatSettingsWarning, loadSettingsFile } from "../../src/Settings/Settings.js"
import type { SettingsFileKind } from "../../src/Settings/Settings.js"

const project = fs.mkdtempSync(Path.join(os.tmpdir(), "settings-sandbox-"))
const home = "/home/someone"

const load = (kind: SettingsFileKind, json: unknown, trusted = true) =>
  Effect.gen(function*() {
    const dir = Path.join(project, kind === "userSettings" ? "home" : ".claude")
    fs.mkdirSync(dir, { recursive: true })
    const file = Path.join(dir, `${kind}.json`)
    fs.writeFileSync(file, JSON.stringify(json))
    const loaded = Option.getOrThrow(yield* loadSettingsFile(file, kind))
    return kind === "projectSettings" ? applyTrust(loaded, trusted) : loaded
  }).pipe(Effect.provide(NodeContext.layer))

describe("sandbox settings", () => {
  it.effect("the user's sandbox keys and the rules give the sandbox its shape", () =>
    Effect.gen(function*() {
      const user = yield* load("userSettings", {
        sandbox: {
          enabled: true,
          failIfUnavailable: true,
          excludedCommands: ["docker:*"],
          allowUnsandboxedCommands: true,
          autoAllowBashIfSandboxed: true,
          network: { allowedDomains: ["registry.npmjs.org"] },
          filesystem: { allowWrite: ["//opt/cache"], denyWrite: ["./locked"], denyRead: ["~/.aws"] }
        },
        permissions: {
          allow: ["WebFetch(domain:*.github.com)", "Edit(//srv/data/**)", "Edit(./src/*.ts)"],
          deny: ["Read(./.env)"]
        }
      })
      const { config, warnings } = sandboxConfig([user], { cwd: project, home })
      expect(warnings).toEqual([])
      expect(config).toEqual({
        enabled: true,
        failIfUnavailable: true,
        allowUnsandboxedCommands: true,
        autoAllowBashIfSandboxed: true,
        excludedCommands: ["docker:*"],
        allowedDomains: ["*.github.com", "registry.npmjs.org"],
        // `./src/*.ts` is not a directory: sandbox-runtime binds directories, so it grants nothing here.
        writable: ["/srv/data", "/opt/cache"],
        unreadable: [Path.join(project, ".env"), `${home}/.aws`],
        protectedPaths: [Path.join(project, "locked")]
      })
    }))

  it.effect("an untrusted project can tighten the sandbox, not widen it, and is told so", () =>
    Effect.gen(function*() {
      const file = yield* load("projectSettings", {
        sandbox: {
          enabled: false,
          failIfUnavailable: true,
          excludedCommands: ["curl:*"],
          autoAllowBashIfSandboxed: true,
          network: { allowedDomains: ["evil.example"] },
          filesystem: { denyRead: ["/secrets"] }
        }
      }, false)
      const { config, warnings } = sandboxConfig([file], { cwd: project, home })
      expect(config).toEqual({
        failIfUnavailable: true,
        excludedCommands: [],
        allowedDomains: [],
        writable: [],
        unreadable: [Path.join(project, "secrets")],
        protectedPaths: []
      })
      expect(warnings.map((warning) => warning.field)).toEqual([
        "sandbox.enabled",
        "sandbox.autoAllowBashIfSandboxed",
        "sandbox.excludedCommands",
        "sandbox.network.allowedDomains"
      ])
      expect(formatSettingsWarning(warnings[0]!)).toContain(
        "sandbox.enabled: not applied: this project is not trusted, and it would widen the sandbox"
      )
    }))

  it.effect("keys this runtime does not apply load with a warning naming them", () =>
    Effect.gen(function*() {
      const user = yield* load("userSettings", {
        sandbox: { enableWeakerNestedSandbox: true, network: { allowUnixSockets: ["/var/run/docker.sock"] } }
      })
      const { warnings } = sandboxConfig([user], { cwd: project, home })
      expect(warnings.map((warning) => `${warning.field}: ${warning.message}`)).toEqual([
        "sandbox.enableWeakerNestedSandbox: this runtime does not apply this sandbox setting",
        "sandbox.network.allowUnixSockets: this runtime does not apply this sandbox setting"
      ])
    }))

  it.effect("a sandbox value of the wrong shape stops the load", () =>
    Effect.gen(function*() {
      const failed = yield* Effect.flip(load("userSettings", { sandbox: { enabled: "yes" } }))
      expect(failed.message).toContain("sandbox")
    }))

  it("command-line rules count too", () => {
    const { config } = sandboxConfig([], {
      cwd: project,
      home,
      extraRules: { allow: ["WebFetch(domain:example.com)"], deny: ["Read(//etc/shadow)"] }
    })
    expect(config.allowedDomains).toEqual(["example.com"])
    expect(config.unreadable).toEqual(["/etc/shadow"])
  })
})
