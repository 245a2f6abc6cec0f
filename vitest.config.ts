import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default is one worker fewer than the cores: one on the 2-core machines CI and most
    // laptops' containers have. Most test files spend their time waiting on processes (the
    // service's Python runtime, Chromium, worker servers) and sockets, so two files run at once
    // keep both cores busy; every test is written for a busy machine (no timed assertions).
    maxWorkers: 2,
  },
});
