#!/usr/bin/python3
"""An independent reference for whole models with control flow: a small ONNX
interpreter in Python on PyTorch ops (this machine has neither onnx nor
onnxruntime for Python), covering the ops Silero VAD uses (If, LSTM, Conv,
Pad reflect, Slice with negative steps, ...). It shares no code with the C++
executor. It runs the model on random inputs and writes a `modelstat verify`
case folder: model.onnx + test_data_set_0/{input,output}_K.pb.

    /usr/bin/python3 bench/onnx_torch_reference.py MODEL.onnx CASE_DIR SEED NAME=DIMS|NAME=iVALUE ...
    /usr/bin/python3 bench/onnx_torch_reference.py silero_vad_v5.onnx /tmp/v5_16k 1 input=1x512 state=2x1x128 sr=i16000
    build/tools/modelstat verify /tmp/v5_16k

NAME=DIMS feeds N(0,1) floats of that shape; NAME=iVALUE an int64 scalar.
"""
import sys, struct, os, shutil, torch
import torch.nn.functional as F
sys.setrecursionlimit(10000)
def varint(b,i):
    r=0;s=0
    while True:
        c=b[i];i+=1;r|=(c&0x7f)<<s;s+=7
        if c<0x80: return r,i
def fields(b):
    i=0;out=[]
    while i<len(b):
        k,i=varint(b,i);f=k>>3;w=k&7
        if w==0: v,i=varint(b,i)
        elif w==2:
            l,i=varint(b,i);v=bytes(b[i:i+l]);i+=l
        elif w==5: v=('f32',bytes(b[i:i+4]));i+=4
        elif w==1: v=('f64',bytes(b[i:i+8]));i+=8
        else: raise Exception(w)
        out.append((f,w,v))
    return out
def s64(v): return v-(1<<64) if v>=(1<<63) else v
def packed_varints(v):
    out=[];i=0
    while i<len(v):
        x,i=varint(v,i);out.append(s64(x))
    return out
DT={1:torch.float32,6:torch.int32,7:torch.int64,9:torch.bool,11:torch.float64,2:torch.uint8,3:torch.int8}
def tensor(b):
    dims=[];dt=1;raw=None;fl=[];i64=[];i32=[];name=''
    for f,w,v in fields(b):
        if f==1: dims += packed_varints(v) if w==2 else [s64(v)]
        elif f==2: dt=v
        elif f==8: name=v.decode()
        elif f==9: raw=v
        elif f==4: fl += list(struct.unpack('<%df'%(len(v)//4),v)) if w==2 else [struct.unpack('<f',v[1])[0]]
        elif f==7: i64 += packed_varints(v) if w==2 else [s64(v)]
        elif f==5: i32 += packed_varints(v) if w==2 else [s64(v)]
    t=DT[dt]
    if raw is not None:
        x=torch.frombuffer(bytearray(raw),dtype=t) if len(raw) else torch.zeros(0,dtype=t)
    elif dt in (1,11): x=torch.tensor(fl,dtype=t)
    elif dt==7: x=torch.tensor(i64,dtype=t)
    else: x=torch.tensor(i32,dtype=torch.int64).to(t)
    return name, x.reshape(dims).clone()
def attr(b):
    a={}
    for f,w,v in fields(b):
        if f==1: a['name']=v.decode()
        elif f==2: a['v']=struct.unpack('<f',v[1])[0]
        elif f==3: a['v']=s64(v)
        elif f==4: a['v']=v.decode()
        elif f==5: a['v']=tensor(v)[1]
        elif f==6: a['v']=graph(v)
        elif f==7: a.setdefault('v',[]); a['v'] += list(struct.unpack('<%df'%(len(v)//4),v)) if w==2 else [struct.unpack('<f',v[1])[0]]
        elif f==8: a.setdefault('v',[]); a['v'] += packed_varints(v) if w==2 else [s64(v)]
    return a['name'], a.get('v')
def node(b):
    d={'in':[],'out':[],'a':{}}
    for f,w,v in fields(b):
        if f==1: d['in'].append(v.decode())
        elif f==2: d['out'].append(v.decode())
        elif f==4: d['op']=v.decode()
        elif f==5:
            k,val=attr(v); d['a'][k]=val
    return d
def graph(b):
    g={'nodes':[],'init':{},'inputs':[],'outputs':[]}
    for f,w,v in fields(b):
        if f==1: g['nodes'].append(node(v))
        elif f==5:
            n,t=tensor(v); g['init'][n]=t
        elif f==11 or f==12:
            nm=[u for ff,ww,u in fields(v) if ff==1][0].decode()
            g['inputs' if f==11 else 'outputs'].append(nm)
    return g

def run(g, env):
    env=dict(env); env.update(g['init'])
    for n in g['nodes']:
        x=[env[i] if i else None for i in n['in']]; a=n['a']; op=n['op']
        r=OPS[op](x,a,env)
        if not isinstance(r,(list,tuple)): r=[r]
        for o,v in zip(n['out'],r):
            if o: env[o]=v
    return [env[o] for o in g['outputs']]
def ax(a,r): return a+r if a<0 else a
def slice_(x,a,e):
    d=x[0]; st=x[1].tolist(); en=x[2].tolist()
    axes=x[3].tolist() if len(x)>3 and x[3] is not None else list(range(len(st)))
    steps=x[4].tolist() if len(x)>4 and x[4] is not None else [1]*len(st)
    for s,e_,a_,p in zip(st,en,axes,steps):
        a_=ax(a_,d.dim()); n=d.shape[a_]
        s=s+n if s<0 else s; e_=e_+n if e_<0 else e_
        if p>0: s=max(0,min(n,s)); e_=max(0,min(n,e_))
        else: s=max(-1,min(n-1,s)); e_=max(-1,min(n-1,e_))
        ids=list(range(s,e_,p))
        d=torch.index_select(d,a_,torch.tensor(ids,dtype=torch.int64))
    return d
def unsq(x,a,e):
    axes=x[1].tolist() if len(x)>1 else a['axes']; y=x[0]
    r=y.dim()+len(axes)
    for q in sorted(ax(v,r) for v in axes): y=y.unsqueeze(q)
    return y
def sq(x,a,e):
    axes=x[1].tolist() if len(x)>1 and x[1] is not None else a.get('axes')
    y=x[0]
    if axes is None: return y.squeeze()
    for q in sorted((ax(v,y.dim()) for v in axes), reverse=True): y=y.squeeze(q)
    return y
def conv(x,a,e):
    X,W=x[0],x[1]; B=x[2] if len(x)>2 else None
    k=len(W.shape)-2; pads=a.get('pads',[0]*2*k)
    assert a.get('auto_pad','NOTSET') in ('NOTSET',)
    Xp=X
    padl=[]
    for i in reversed(range(k)): padl += [pads[i], pads[i+k]]
    Xp=F.pad(X,padl)
    f={1:F.conv1d,2:F.conv2d}[k]
    return f(Xp,W,B,stride=a.get('strides',[1]*k),dilation=a.get('dilations',[1]*k),groups=a.get('group',1))
def pad(x,a,e):
    X=x[0]; p=x[1].tolist(); mode=a.get('mode','constant'); r=X.dim()
    val=x[2].item() if len(x)>2 and x[2] is not None else 0.0
    padl=[]
    for i in reversed(range(r)): padl += [p[i],p[i+r]]
    # torch pads only trailing dims for reflect: strip leading zero pairs
    while len(padl)>2 and padl[-1]==0 and padl[-2]==0 and mode!='constant': padl=padl[:-2]
    if mode=='constant': return F.pad(X,padl,value=val)
    nd=len(padl)//2; Y=X
    lead=X.dim()-nd
    Y=X.reshape((-1,)+tuple(X.shape[lead:])) if lead!=1 else X
    Y=F.pad(Y.unsqueeze(0) if lead==0 else Y,padl,mode=mode)
    return Y.reshape(tuple(X.shape[:lead])+tuple(Y.shape[-nd:]))
def lstm(x,a,e):
    X,W,R=x[0],x[1],x[2]; B=x[3] if len(x)>3 else None
    H=a['hidden_size']; assert a.get('direction','forward')=='forward' and a.get('layout',0)==0
    assert len(x)<=4 or x[4] is None
    seq,b,_=X.shape
    h=x[5][0] if len(x)>5 and x[5] is not None else torch.zeros(b,H)
    c=x[6][0] if len(x)>6 and x[6] is not None else torch.zeros(b,H)
    Wb=B[0][:4*H] if B is not None else 0; Rb=B[0][4*H:] if B is not None else 0
    Ys=[]
    for t in range(seq):
        gts=X[t]@W[0].T+h@R[0].T+Wb+Rb
        i,o,f,cc=gts.split(H,dim=1)
        i=torch.sigmoid(i);o=torch.sigmoid(o);f=torch.sigmoid(f);cc=torch.tanh(cc)
        c=f*c+i*cc; h=o*torch.tanh(c); Ys.append(h)
    Y=torch.stack(Ys).unsqueeze(1)
    return [Y,h.unsqueeze(0),c.unsqueeze(0)]
def iff(x,a,e):
    br=a['then_branch'] if bool(x[0].reshape(-1)[0]) else a['else_branch']
    return run(br,e)
def redmean(x,a,e):
    axes=a.get('axes') if 'axes' in a else (x[1].tolist() if len(x)>1 and x[1] is not None else None)
    kd=bool(a.get('keepdims',1))
    if axes is None: axes=list(range(x[0].dim()))
    return x[0].mean(dim=[ax(v,x[0].dim()) for v in axes],keepdim=kd)
def gather(x,a,e):
    d,i=x[0],x[1]; axis=ax(a.get('axis',0),d.dim())
    i=torch.where(i<0,i+d.shape[axis],i)
    return torch.index_select(d,axis,i.reshape(-1)).reshape(d.shape[:axis]+i.shape+d.shape[axis+1:])
def reshape(x,a,e):
    s=x[1].tolist(); s=[x[0].shape[k] if v==0 else v for k,v in enumerate(s)]
    return x[0].reshape(s)
def cos(x,a,e):
    v=a.get('value',torch.zeros(1)); return v.expand(x[0].tolist()).clone() if v.numel()==1 else v
def const(x,a,e):
    if 'value' in a: return a['value']
    if 'value_int' in a: return torch.tensor(a['value_int'])
    if 'value_ints' in a: return torch.tensor(a['value_ints'])
    if 'value_float' in a: return torch.tensor(a['value_float'],dtype=torch.float32)
    if 'value_floats' in a: return torch.tensor(a['value_floats'],dtype=torch.float32)
    raise Exception(a)
def bcast(f): return lambda x,a,e: f(x[0],x[1])
OPS={'Add':bcast(torch.add),'Sub':bcast(torch.sub),'Mul':bcast(torch.mul),'Div':bcast(torch.div),
 'Pow':bcast(torch.pow),'Equal':bcast(torch.eq),'Less':bcast(torch.lt),'Greater':bcast(torch.gt),
 'Cast':lambda x,a,e: x[0].to(DT[a['to']]),
 'Concat':lambda x,a,e: torch.cat(x,dim=ax(a['axis'],x[0].dim())),
 'Constant':const,'ConstantOfShape':cos,'Conv':conv,'Gather':gather,'Identity':lambda x,a,e:x[0],
 'If':iff,'LSTM':lstm,'Not':lambda x,a,e: ~x[0],'Pad':pad,'ReduceMean':redmean,
 'Relu':lambda x,a,e: torch.relu(x[0]),'Reshape':reshape,
 'Shape':lambda x,a,e: torch.tensor(list(x[0].shape),dtype=torch.int64),
 'Sigmoid':lambda x,a,e: torch.sigmoid(x[0]),'Size':lambda x,a,e: torch.tensor(x[0].numel()),
 'Slice':slice_,'Sqrt':lambda x,a,e: torch.sqrt(x[0]),'Squeeze':sq,
 'Transpose':lambda x,a,e: x[0].permute(a['perm']) if 'perm' in a else x[0].permute(*reversed(range(x[0].dim()))),
 'Unsqueeze':unsq,'Log':lambda x,a,e: torch.log(x[0]),'Neg':lambda x,a,e: -x[0],
 'Tanh':lambda x,a,e: torch.tanh(x[0]),'Exp':lambda x,a,e: torch.exp(x[0]),
 'Softmax':lambda x,a,e: torch.softmax(x[0],dim=a.get('axis',-1)),
 'Clip':lambda x,a,e: torch.clamp(x[0],x[1] if len(x)>1 else None,x[2] if len(x)>2 else None),
}
ETYPE={torch.float32:1,torch.int64:7,torch.bool:9,torch.int32:6}
def write_tensor(path,name,t):
    def vi(n):
        o=b''
        while True:
            c=n&0x7f;n>>=7
            if n: o+=bytes([c|0x80])
            else: return o+bytes([c])
    def fld(f,w): return vi((f<<3)|w)
    out=b''
    for d in t.shape: out+=fld(1,0)+vi(d)
    out+=fld(2,0)+vi(ETYPE[t.dtype])
    nb=name.encode(); out+=fld(8,2)+vi(len(nb))+nb
    raw=t.contiguous().numpy().tobytes(); out+=fld(9,2)+vi(len(raw))+raw
    open(path,'wb').write(out)

model_path, case_dir, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
m=open(model_path,'rb').read()
g=None
for f,w,v in fields(m):
    if f==7: g=graph(v)
torch.manual_seed(seed)
shapes=dict(a.split('=') for a in sys.argv[4:])
inputs={}
for nm in g['inputs']:
    if nm in g['init']: continue
    spec=shapes[nm]
    if spec.startswith('i'): inputs[nm]=torch.tensor(int(spec[1:]),dtype=torch.int64)
    else: inputs[nm]=torch.randn([int(d) for d in spec.split('x')])
with torch.no_grad(): outs=run(g,inputs)
if os.path.exists(case_dir): shutil.rmtree(case_dir)
os.makedirs(case_dir+'/test_data_set_0')
shutil.copy(model_path,case_dir+'/model.onnx')
for k,nm in enumerate([n for n in g['inputs'] if n not in g['init']]):
    write_tensor(f'{case_dir}/test_data_set_0/input_{k}.pb',nm,inputs[nm])
for k,(nm,t) in enumerate(zip(g['outputs'],outs)):
    write_tensor(f'{case_dir}/test_data_set_0/output_{k}.pb',nm,t)
    print(nm, tuple(t.shape), t.reshape(-1)[:4].tolist())
