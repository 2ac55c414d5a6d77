-- Commands and the LspAttach hook, with or without `require("rutter").setup()`.
if vim.g.loaded_rutter or vim.fn.has("nvim-0.11") == 0 then
  return
end
vim.g.loaded_rutter = 1
require("rutter").init()
require("rutter.runs").init()
require("rutter.memory").init()
require("rutter.session").init()
require("rutter.pins").init()
