-- `K` on an instruction file: the hover window has a border (the plugin's K, over Neovim's).
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local api = vim.api

local function floats()
  local found = {}
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_config(win).relative ~= "" then
      found[#found + 1] = win
    end
  end
  return found
end

H.run(function(R)
  require("rutter").setup({})
  local go = H.edit("services/api/internal/parser/input.go")
  H.attached(go)
  local agents = H.edit("AGENTS.md")
  H.attached(agents)
  R.winborder = vim.o.winborder
  R.k_desc = vim.fn.maparg("K", "n", false, true).desc
  H.press("K")
  H.wait("the hover window", function()
    return #floats() > 0
  end)
  local win = floats()[1]
  local config = api.nvim_win_get_config(win)
  R.border = config.border
  R.hover_first_line = api.nvim_buf_get_lines(api.nvim_win_get_buf(win), 0, 1, false)[1]
  R.current_buffer_unchanged = api.nvim_get_current_buf() == agents
end)
