import { defineConfig } from "vite";

// One ES module and one stylesheet with fixed names, so the fake Nextcloud
// and the PHP app (Util::addScript / addStyle) can name them:
// dist/tamebi-main.mjs and dist/tamebi-main.css.
export default defineConfig({
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    cssCodeSplit: false,
    rollupOptions: {
      input: "src/main.ts",
      // zod's /* @__PURE__ */ comments in positions Rollup ignores: noise.
      onwarn(warning, warn) {
        if (warning.code !== "INVALID_ANNOTATION") warn(warning);
      },
      output: {
        format: "es",
        entryFileNames: "tamebi-main.mjs",
        chunkFileNames: "tamebi-[name].mjs",
        assetFileNames: "tamebi-main[extname]",
      },
    },
  },
});
