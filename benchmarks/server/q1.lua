-- wrk script: POST /q with q1 (point_lookup) for a random user's email.
-- USERS (environment) is how many users the store has.
local users = tonumber(os.getenv("USERS") or "1000")
local token = os.getenv("TOKEN")
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
if token and token ~= "" then wrk.headers["Authorization"] = "Bearer " .. token end
local query = "[:find ?e ?name :in $ ?email :where [?e :user/email ?email] [?e :user/name ?name]]"
math.randomseed(os.time())
request = function()
  local email = "user" .. math.random(0, users - 1) .. "@example.com"
  local body = '{"query": "' .. query .. '", "inputs": ["' .. email .. '"]}'
  return wrk.format(nil, "/q", nil, body)
end
response = function(status, headers, body)
  if status ~= 200 then
    io.stderr:write("status " .. status .. ": " .. body .. "\n")
  end
end
