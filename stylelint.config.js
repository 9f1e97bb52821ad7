// Stylelint for the lore inspector page (worldbook/api/ui/css), run by scripts/ui-lint.
// The standard rules, less three that fight the sheet's deliberate choices:
export default {
  extends: ["stylelint-config-standard"],
  rules: {
    // Short rules sit on one line so the sheet reads as a table of components.
    "declaration-block-single-line-max-declarations": null,
    // It flags `.tabs a` after `#nav a` although no element matches both; reordering the
    // sheet to please it would risk the cascade for no gain.
    "no-descending-specificity": null,
    // `(min-width: 700px)` works in every browser; the range form needs Safari 16.4.
    "media-feature-range-notation": "prefix",
  },
};
