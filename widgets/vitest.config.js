// The views are plain ES modules in ../icenb/widgets/static/ (shipped in the wheel, no build
// step); the tests import them from there and run them in jsdom.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "jsdom",
    include: ["test/**/*.test.js"],
    watch: false,
  },
});
