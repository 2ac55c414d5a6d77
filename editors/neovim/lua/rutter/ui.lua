--- What rutter's floating windows share: filling a read-only buffer with highlighted lines,
--- and a centred size for lines that are not wrapped.
local M = {}

local api = vim.api

--- Replace the lines of read-only `buf`, highlighting line `lnum` with `hl[lnum]` (in `ns`).
--- @param buf integer
--- @param ns integer
--- @param lines string[]
--- @param hl table<integer, string>
function M.set_lines(buf, ns, lines, hl)
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for lnum, group in pairs(hl) do
    api.nvim_buf_set_extmark(buf, ns, lnum - 1, 0, { end_row = lnum - 1, end_col = #lines[lnum], hl_group = group })
  end
end

--- A window config centred in the editor, as wide as the longest line (at least `min_width`)
--- and as high as the lines, within the screen.
--- @param lines string[]
--- @param min_width integer
function M.geometry(lines, min_width)
  local longest = min_width
  for _, line in ipairs(lines) do
    longest = math.max(longest, vim.fn.strdisplaywidth(line))
  end
  local width = math.min(longest, math.max(20, vim.o.columns - 4))
  local height = math.min(#lines, math.max(3, vim.o.lines - vim.o.cmdheight - 4))
  return {
    relative = "editor",
    width = width,
    height = math.max(1, height),
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
  }
end

return M
