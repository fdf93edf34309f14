import torch
from torch.profiler import profile, ProfilerActivity
shapes=[(336,3072,1536),(304,6144,2048),(336,6144,2048),(336,3072,6144),(304,3072,1536),(1024,3072,1536)]
for m,n,k in shapes:
    a=torch.randn(m,k,device='cuda',dtype=torch.bfloat16); b=torch.randn(n,k,device='cuda',dtype=torch.bfloat16)
    for _ in range(5): torch.nn.functional.linear(a,b)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(20): torch.nn.functional.linear(a,b)
        torch.cuda.synchronize()
    for e in prof.key_averages():
        if e.device_type.name=='CUDA' or 'gemm' in e.key.lower() or 'nvjet' in e.key.lower():
            print(m,n,k, e.key[:150], 'avg_us=%.2f'%(e.device_time_total/max(e.count,1)), 'count',e.count)
