-- :RutterMemory names the workspace by its ID (registered as another name than the folder),
-- and a memory saved with :w loses the blank lines at its end.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local api = vim.api

H.run(function(R)
  require("rutter").setup({})
  local source = H.edit("services/api/internal/parser/input.go")
  H.attached(source)
  local events = {}
  api.nvim_create_autocmd("User", {
    pattern = "RutterMemory",
    callback = function(args)
      events[#events + 1] = args.data
    end,
  })
  vim.cmd("RutterMemory")
  H.wait("the memory list", function()
    local f = require("rutter.memory").float()
    return f and f.result
  end)
  R.header = require("rutter.memory").float().lines[1]

  H.press("a")
  local draft = api.nvim_get_current_buf()
  api.nvim_buf_set_lines(draft, 0, -1, false, { "Fuzz first", "", "Run the fuzzers.", "Then merge.", "", "  ", "" })
  local before = #events
  vim.cmd.write()
  H.wait("the created memory", function()
    for index = before + 1, #events do
      if events[index].action == "create" then
        R.created = events[index].result
        R.error = events[index].error or vim.NIL
        return true
      end
    end
  end)
  R.modified = vim.bo[draft].modified
end)
