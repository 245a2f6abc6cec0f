// The linter `npm test` runs first: ESLint's and typescript-eslint's recommended rules, and the
// widest line of code (200 characters). A line that is one string alone (a description, a
// message) or part of a template literal may be wider: prose is not wrapped mid-sentence.
import js from "@eslint/js";
import stylistic from "@stylistic/eslint-plugin";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "**/node_modules/", "python/", "coverage/"] },
  js.configs.recommended,
  tseslint.configs.recommended,
  { files: ["**/*.{js,mjs,cjs}"], languageOptions: { globals: globals.node } },
  // Tests and benchmarks read answers as JSON of any shape.
  { files: ["test/**", "bench/**"], rules: { "@typescript-eslint/no-explicit-any": "off" } },
  {
    plugins: { "@stylistic": stylistic },
    rules: {
      "@stylistic/max-len": [
        "error",
        { code: 200, ignoreUrls: true, ignoreRegExpLiterals: true, ignoreTemplateLiterals: true, ignorePattern: "^\\s*(\\w+: )?(\\? )?([\"'`]).*\\3[,;)]*$" },
      ],
      // A variable assigned once, after closures that read it lazily, stays a `let`.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
      "@typescript-eslint/no-unused-expressions": ["error", { allowShortCircuit: true, allowTernary: true }],
      // Names beginning with `_` are kept on purpose: destructuring that drops a field, a parameter a signature needs.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_", caughtErrors: "none" }],
    },
  },
);
