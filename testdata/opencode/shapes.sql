-- Every shape panto reads of an OpenCode database (after schema.sql).
-- Session ses_A (1.18): a prompt; a reply with reasoning, text and two
-- tool calls, one completed and one failed; a reply with no "total"; a
-- compaction (the request, then the summary reply); a reply that failed
-- (an APIError, no usage); a call still in flight (running, no usage).
-- ses_B: a subagent of ses_A (1.2.21: output already holds reasoning; its
-- own cost counts reasoning twice). ses_C: 1.2.21, no "total".
INSERT INTO project VALUES ('prj1', '/proj', 'git', 'proj', 1780000000000, 1780000000000, '[]');
INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated) VALUES
	('ses_A', 'prj1', NULL, 'brave-fox', '/proj', 'List the files', 'v1.18.4', 1780000000000, 1780000090000),
	('ses_B', 'prj1', 'ses_A', 'calm-owl', '/proj', 'Subtask', 'v1.2.21', 1780000100000, 1780000110000),
	('ses_C', 'prj1', NULL, 'dry-elk', '/proj', 'Old one', 'v1.2.21', 1780000200000, 1780000210000);
INSERT INTO message VALUES
	('msg_a1', 'ses_A', 1780000001000, 1780000001000, '{"role":"user","time":{"created":1780000001000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}'),
	('msg_a2', 'ses_A', 1780000002000, 1780000009000, '{"parentID":"msg_a1","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/proj","root":"/proj"},"cost":0.00915,"tokens":{"total":4650,"input":1000,"output":200,"reasoning":50,"cache":{"read":3000,"write":400}},"modelID":"claude-sonnet-4-5","providerID":"anthropic","time":{"created":1780000002000,"completed":1780000009000},"finish":"tool-calls"}'),
	('msg_a3', 'ses_A', 1780000010000, 1780000011000, '{"parentID":"msg_a1","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/proj","root":"/proj"},"cost":0,"tokens":{"input":10,"output":5,"reasoning":5,"cache":{"read":0,"write":0}},"modelID":"claude-sonnet-4-5","providerID":"anthropic","time":{"created":1780000010000,"completed":1780000011000},"finish":"stop"}'),
	('msg_a4', 'ses_A', 1780000020000, 1780000020000, '{"role":"user","time":{"created":1780000020000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}'),
	('msg_a5', 'ses_A', 1780000021000, 1780000025000, '{"parentID":"msg_a4","role":"assistant","mode":"compaction","agent":"compaction","summary":true,"path":{"cwd":"/proj","root":"/proj"},"cost":0,"tokens":{"total":600,"input":500,"output":100,"reasoning":20,"cache":{"read":0,"write":0}},"modelID":"claude-sonnet-4-5","providerID":"anthropic","time":{"created":1780000021000,"completed":1780000025000},"finish":"stop"}'),
	('msg_a6', 'ses_A', 1780000030000, 1780000030000, '{"role":"user","time":{"created":1780000030000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}'),
	('msg_a7', 'ses_A', 1780000031000, 1780000032000, '{"parentID":"msg_a6","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/proj","root":"/proj"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"modelID":"claude-sonnet-4-5","providerID":"anthropic","time":{"created":1780000031000,"completed":1780000032000},"error":{"name":"APIError","data":{"message":"Overloaded","isRetryable":true}}}'),
	('msg_a8', 'ses_A', 1780000040000, 1780000040000, '{"role":"user","time":{"created":1780000040000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}'),
	('msg_a9', 'ses_A', 1780000041000, 1780000041000, '{"parentID":"msg_a8","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/proj","root":"/proj"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"modelID":"claude-sonnet-4-5","providerID":"anthropic","time":{"created":1780000041000}}'),
	('msg_b1', 'ses_B', 1780000101000, 1780000101000, '{"role":"user","time":{"created":1780000101000},"agent":"general","model":{"providerID":"openai","modelID":"gpt-5"}}'),
	('msg_b2', 'ses_B', 1780000102000, 1780000105000, '{"parentID":"msg_b1","role":"assistant","mode":"general","agent":"general","path":{"cwd":"/proj","root":"/proj"},"cost":0.0155,"tokens":{"total":10200,"input":10000,"output":200,"reasoning":100,"cache":{"read":0,"write":0}},"modelID":"gpt-5","providerID":"openai","time":{"created":1780000102000,"completed":1780000105000},"finish":"stop"}'),
	('msg_c1', 'ses_C', 1780000201000, 1780000201000, '{"role":"user","time":{"created":1780000201000},"agent":"build","model":{"providerID":"openai","modelID":"gpt-5"}}'),
	('msg_c2', 'ses_C', 1780000202000, 1780000203000, '{"parentID":"msg_c1","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/proj","root":"/proj"},"cost":0,"tokens":{"input":100,"output":80,"reasoning":30,"cache":{"read":0,"write":0}},"modelID":"gpt-5","providerID":"openai","time":{"created":1780000202000,"completed":1780000203000},"finish":"stop"}');
INSERT INTO part VALUES
	('prt_a1_1', 'msg_a1', 'ses_A', 1780000001000, 1780000001000, '{"type":"text","text":"List the files here"}'),
	('prt_a1_2', 'msg_a1', 'ses_A', 1780000001000, 1780000001000, '{"type":"file","mime":"image/png","filename":"shot.png","url":"data:image/png;base64,aGVsbG8="}'),
	('prt_a2_1', 'msg_a2', 'ses_A', 1780000002000, 1780000002000, '{"type":"step-start","snapshot":"abc"}'),
	('prt_a2_2', 'msg_a2', 'ses_A', 1780000003000, 1780000003000, '{"type":"reasoning","text":"The user wants a listing.","time":{"start":1780000003000,"end":1780000003100},"metadata":{"anthropic":{"signature":"sig-1"}}}'),
	('prt_a2_3', 'msg_a2', 'ses_A', 1780000004000, 1780000004000, '{"type":"text","text":"I will look."}'),
	('prt_a2_4', 'msg_a2', 'ses_A', 1780000005000, 1780000006000, '{"type":"tool","tool":"bash","callID":"call_1","state":{"status":"completed","input":{"command":"ls"},"output":"a.txt\nb.txt","metadata":{},"title":"ls","time":{"start":1780000005000,"end":1780000006000}}}'),
	('prt_a2_5', 'msg_a2', 'ses_A', 1780000007000, 1780000008000, '{"type":"tool","tool":"read","callID":"call_2","state":{"status":"error","input":{"filePath":"/proj/c.txt"},"error":"no such file","time":{"start":1780000007000,"end":1780000008000}}}'),
	('prt_a2_6', 'msg_a2', 'ses_A', 1780000009000, 1780000009000, '{"reason":"tool-calls","type":"step-finish","tokens":{"total":4650,"input":1000,"output":200,"reasoning":50,"cache":{"read":3000,"write":400}},"cost":0.00915}'),
	('prt_a3_1', 'msg_a3', 'ses_A', 1780000010000, 1780000010000, '{"type":"step-start"}'),
	('prt_a3_2', 'msg_a3', 'ses_A', 1780000010500, 1780000010500, '{"type":"text","text":"Done: a.txt and b.txt."}'),
	('prt_a3_3', 'msg_a3', 'ses_A', 1780000011000, 1780000011000, '{"reason":"stop","type":"step-finish","tokens":{"input":10,"output":5,"reasoning":5,"cache":{"read":0,"write":0}},"cost":0}'),
	('prt_a4_1', 'msg_a4', 'ses_A', 1780000020000, 1780000020000, '{"type":"compaction","auto":true}'),
	('prt_a5_1', 'msg_a5', 'ses_A', 1780000021000, 1780000021000, '{"type":"step-start"}'),
	('prt_a5_2', 'msg_a5', 'ses_A', 1780000024000, 1780000024000, '{"type":"text","text":"Summary: the files are a.txt and b.txt."}'),
	('prt_a5_3', 'msg_a5', 'ses_A', 1780000025000, 1780000025000, '{"reason":"stop","type":"step-finish","tokens":{"total":600,"input":500,"output":100,"reasoning":20,"cache":{"read":0,"write":0}},"cost":0}'),
	('prt_a6_1', 'msg_a6', 'ses_A', 1780000030000, 1780000030000, '{"type":"text","text":"Go on"}'),
	('prt_a8_1', 'msg_a8', 'ses_A', 1780000040000, 1780000040000, '{"type":"text","text":"Count the lines"}'),
	('prt_a9_1', 'msg_a9', 'ses_A', 1780000041000, 1780000041000, '{"type":"step-start"}'),
	('prt_a9_2', 'msg_a9', 'ses_A', 1780000041500, 1780000041500, '{"type":"tool","tool":"bash","callID":"call_3","state":{"status":"running","input":{"command":"wc -l a.txt"},"time":{"start":1780000041500}}}'),
	('prt_b1_1', 'msg_b1', 'ses_B', 1780000101000, 1780000101000, '{"type":"text","text":"Find the tests"}'),
	('prt_b2_1', 'msg_b2', 'ses_B', 1780000102000, 1780000102000, '{"type":"step-start"}'),
	('prt_b2_2', 'msg_b2', 'ses_B', 1780000104000, 1780000104000, '{"type":"text","text":"There are none."}'),
	('prt_b2_3', 'msg_b2', 'ses_B', 1780000105000, 1780000105000, '{"reason":"stop","type":"step-finish","tokens":{"total":10200,"input":10000,"output":200,"reasoning":100,"cache":{"read":0,"write":0}},"cost":0.0155}'),
	('prt_c1_1', 'msg_c1', 'ses_C', 1780000201000, 1780000201000, '{"type":"text","text":"Hello"}'),
	('prt_c2_1', 'msg_c2', 'ses_C', 1780000203000, 1780000203000, '{"type":"text","text":"Hi."}');
