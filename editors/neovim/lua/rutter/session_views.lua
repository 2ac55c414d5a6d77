--- The scratch views of session continuity: a node's detail (`rutter/session/node`) in a split,
--- and the comparison of two nodes (`rutter/session/compare`) as two read-only buffers side by
--- side in diff mode, in a new tab.
local M = {}

local api = vim.api
local fmt = require("rutter.session_format")
local session = require("rutter.session")
local ui = require("rutter.ui")

local scratch = ui.scratch
local show_in_split = ui.show_in_split

--- Open `node_id`'s detail (`rutter/session/node`) in a scratch split; `tree_node` is the tree's
--- row for it (its drift now).
function M.open_node(client, node_id, tree_node, workspace_id)
  session.call(client, session.PREFIX .. "node", { node_id = node_id }, function(err, result)
    if err then
      result = { error = session.error_of(err) }
      session.show_error("no detail of " .. node_id, err)
    end
    local buf = scratch("rutter://node/" .. node_id, fmt.node(result, tree_node), workspace_id)
    show_in_split(buf, false)
    api.nvim_win_set_cursor(0, { 1, 0 })
    session.fire({ action = "node", result = result, buf = buf })
  end)
end

--- Compare nodes `a` and `b` (`rutter/session/compare`): two scratch buffers side by side in
--- diff mode, line for line the same facts, so what differs is highlighted.
function M.compare_nodes(client, a, b, workspace_id)
  session.call(client, session.PREFIX .. "compare", { node_a = a, node_b = b }, function(err, result)
    if err then
      session.fire({ action = "compare", error = session.show_error("no comparison of " .. a .. " and " .. b, err) })
      return
    end
    local lines_a, lines_b, differ = fmt.compare(result)
    local buf_a = scratch("rutter://compare/" .. a .. "/A", lines_a, workspace_id)
    local buf_b = scratch("rutter://compare/" .. b .. "/B", lines_b, workspace_id)
    for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
      local buf = api.nvim_win_get_buf(win)
      if buf == buf_a or buf == buf_b then
        api.nvim_win_close(win, true)
      end
    end
    vim.cmd("tabnew")
    local scratch_tab_buf = api.nvim_get_current_buf()
    api.nvim_win_set_buf(0, buf_a)
    if api.nvim_buf_is_valid(scratch_tab_buf) and scratch_tab_buf ~= buf_a then
      pcall(api.nvim_buf_delete, scratch_tab_buf, { force = true })
    end
    local win_a = api.nvim_get_current_win()
    vim.cmd("diffthis")
    vim.cmd("rightbelow vsplit")
    local win_b = api.nvim_get_current_win()
    api.nvim_win_set_buf(win_b, buf_b)
    vim.cmd("diffthis")
    for _, win in ipairs({ win_a, win_b }) do
      vim.wo[win].foldenable = false
      vim.wo[win].wrap = false
    end
    local summary = #differ == 0 and "the same facts" or ("differ in " .. table.concat(differ, ", "))
    ui.notify(string.format("compare: %s (left %s, right %s)", summary, a, b))
    session.fire({ action = "compare", result = result, buffers = { buf_a, buf_b }, differ = differ })
  end)
end

return M
