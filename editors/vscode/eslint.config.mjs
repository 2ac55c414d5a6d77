// Flat config: typescript-eslint's type-aware recommended rules on src/ and test/.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "out/", "node_modules/", "*.vsix"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": [
        "error",
        // node:test runs describe/it itself; their promises are not ours to await.
        { allowForKnownSafeCalls: [{ from: "package", package: "node:test", name: ["describe", "it", "test"] }] },
      ],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      eqeqeq: ["error", "always"],
      // Only src/vscodeApi.ts may import the editor API: everything else is unit-tested without it.
      "no-restricted-imports": [
        "error",
        {
          paths: [
            { name: "vscode", message: "use the ports in src/ports.ts; only src/vscodeApi.ts imports vscode" },
          ],
          patterns: [
            { group: ["vscode-languageclient", "vscode-languageclient/*"], message: "only src/vscodeApi.ts starts the client" },
          ],
        },
      ],
    },
  },
  {
    files: ["src/vscodeApi.ts"],
    rules: { "no-restricted-imports": "off" },
  },
  {
    files: ["**/*.mjs"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      parserOptions: { projectService: false },
      globals: { process: "readonly", console: "readonly", Buffer: "readonly" },
    },
  },
);
