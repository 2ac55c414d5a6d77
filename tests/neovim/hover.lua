-- Hover and code lens on instruction files: what they are, whether they are delivered, and why.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)

local function hover(buf, client)
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local answers = vim.lsp.buf_request_sync(buf, "textDocument/hover", params, H.timeout)
  assert(answers, "no hover answer")
  for _, answer in pairs(answers) do
    assert(not answer.err, vim.inspect(answer.err))
    if answer.result then
      return { kind = answer.result.contents.kind, value = answer.result.contents.value }
    end
  end
  return vim.NIL
end

H.run(function(R)
  require("rutter").setup({})
  local go = H.edit("services/api/internal/parser/input.go")
  H.attached(go)
  local root = H.edit("AGENTS.md")
  local client = H.attached(root)
  local superseded = H.edit("services/api/AGENTS.md")
  H.attached(superseded)
  R.filetype = vim.bo[superseded].filetype

  vim.api.nvim_set_current_buf(root)
  R.root_hover = hover(root, client)
  R.root_lenses = H.lenses(root)
  vim.api.nvim_set_current_buf(superseded)
  R.superseded_hover = hover(superseded, client)
  R.superseded_lenses = H.lenses(superseded)
  -- What a user sees: the lens rendered as virtual text on line 1.
  R.lens_virt_text = vim.NIL
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(superseded, -1, 0, -1, { details = true })) do
    local chunks = mark[4].virt_text
    if chunks and mark[2] == 0 then
      R.lens_virt_text = table.concat(vim.tbl_map(function(chunk)
        return chunk[1]
      end, chunks))
    end
  end
  local ignored = H.edit(".prayu/rules/drafts/wip.md")
  H.attached(ignored)
  R.ignored_lenses = H.lenses(ignored)
  -- Source files get no lens (only instruction files do).
  R.go_lenses = #vim.lsp.codelens.get(go)
end)
