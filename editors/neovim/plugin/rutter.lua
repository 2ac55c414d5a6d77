-- Commands and the LspAttach hook, with or without `require("rutter").setup()`.
if vim.g.loaded_rutter or vim.fn.has("nvim-0.11") == 0 then
  return
end
vim.g.loaded_rutter = 1
require("rutter").init()
require("rutter.runs").init()
require("rutter.memory").init()
require("rutter.candidates").init()
require("rutter.session").init()
require("rutter.pins").init()
require("rutter.agents").init()
require("rutter.history").init()
require("rutter.compaction").init()
require("rutter.context").init()
-- Cursor's project rules (.cursor/rules/*.mdc) are Markdown with front matter; Neovim gives
-- `.mdc` no filetype, and a buffer without one fires no FileType event, so no language server
-- would attach and the agents' diagnostics on the rule would never show.
vim.filetype.add({ pattern = { [".*/%.cursor/rules/.*%.mdc"] = "markdown" } })
