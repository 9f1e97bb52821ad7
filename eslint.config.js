// ESLint for the lore inspector page (worldbook/api/ui/js), run by scripts/ui-lint.
// The page is plain ES modules loaded by the browser, with no build step.
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    files: ["worldbook/api/ui/js/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: { ...globals.browser },
    },
  },
];
