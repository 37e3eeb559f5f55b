import json, os, random, sys
random.seed(1)
root=sys.argv[1]; target=int(sys.argv[2])
txt="Quotes \" backslash \\ tab\t é ü 日本 " + "lorem ipsum dolor sit amet "*20
size=0; s=0
while size<target:
    sid="%08x-0000-4000-8000-%012x"%(s,s); s+=1
    d=os.path.join(root,"projects","-home-u-p%d"%(s%10)); os.makedirs(os.path.join(d,sid,"subagents"),exist_ok=True)
    lines=[]; parent=None; t=0
    def ts():
        global t; t+=1
        return "2026-02-%02dT%02d:%02d:%02d.000Z"%(1+s%28,(t//3600)%24,(t//60)%60,t%60)
    for turn in range(40):
        u="u%d-%d"%(s,turn*10)
        lines.append({"parentUuid":parent,"isSidechain":False,"userType":"external","cwd":"/home/u/p","sessionId":sid,"version":"2.1.30","type":"user","message":{"role":"user","content":"Do step %d. "%turn+txt},"uuid":u,"timestamp":ts()}); parent=u
        mid="msg_%d_%d"%(s,turn); rid="req_%d_%d"%(s,turn)
        blocks=[{"type":"thinking","thinking":txt,"signature":"c2ln"*20},{"type":"text","text":txt},{"type":"tool_use","id":"toolu_%d_%d"%(s,turn),"name":"Bash","input":{"command":"ls -la"}}]
        for k,b in enumerate(blocks):
            out=10 if k<2 else 300+turn
            a="a%d-%d-%d"%(s,turn,k)
            lines.append({"parentUuid":parent,"isSidechain":False,"userType":"external","cwd":"/home/u/p","sessionId":sid,"version":"2.1.30","message":{"id":mid,"type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[b],"stop_reason":"tool_use" if k==2 else None,"usage":{"input_tokens":3,"cache_creation_input_tokens":500,"cache_read_input_tokens":20000+turn,"cache_creation":{"ephemeral_5m_input_tokens":200,"ephemeral_1h_input_tokens":300},"output_tokens":out}},"requestId":rid,"type":"assistant","uuid":a,"timestamp":ts()}); parent=a
        r="r%d-%d"%(s,turn)
        lines.append({"parentUuid":parent,"isSidechain":False,"userType":"external","cwd":"/home/u/p","sessionId":sid,"version":"2.1.30","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_%d_%d"%(s,turn),"type":"tool_result","content":txt*3,"is_error":False}]},"uuid":r,"timestamp":ts()}); parent=r
        lines.append({"parentUuid":parent,"isSidechain":False,"cwd":"/home/u/p","sessionId":sid,"type":"progress","data":{"type":"hook_progress","hookEvent":"PostToolUse"},"uuid":"p"+r,"timestamp":ts()}); parent="p"+r
    with open(os.path.join(d,sid+".jsonl"),"w") as f:
        for l in lines: f.write(json.dumps(l,ensure_ascii=False,separators=(",",":"))+"\n")
    sub=[]
    for k in range(5):
        sub.append({"parentUuid":None,"isSidechain":True,"agentId":"a%d"%s,"cwd":"/home/u/p","sessionId":sid,"type":"assistant","message":{"id":"msg_sub_%d_%d"%(s,k),"type":"message","role":"assistant","model":"claude-haiku-4-5-20251001","content":[{"type":"text","text":txt}],"stop_reason":"end_turn","usage":{"input_tokens":100,"output_tokens":50}},"requestId":"req_sub_%d_%d"%(s,k),"uuid":"s%d-%d"%(s,k),"timestamp":ts()})
    with open(os.path.join(d,sid,"subagents","agent-a%d.jsonl"%s),"w") as f:
        for l in sub: f.write(json.dumps(l,ensure_ascii=False,separators=(",",":"))+"\n")
    size+=os.path.getsize(os.path.join(d,sid+".jsonl"))
