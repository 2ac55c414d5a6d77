-- :RutterInstructions on a Go file whose stack holds a link (a source with its link target)
-- and an alias (a link to a file that is already a source): the float's lines.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
H.run(function(R)
  require("rutter").setup({})
  H.edit("services/api/internal/parser/input.go")
  local f = H.float_after("RutterInstructions", "the float")
  R.float = H.float_data(f)
end)
